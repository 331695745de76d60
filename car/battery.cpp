#include "battery.h"
#include <stdio.h>

namespace car {

uint16_t batteryCentivolts(uint16_t adc, const BatteryDivider &divider) {
    if (adc > 1023) adc = 1023;
    // In two steps so that 32 bits suffice (no 64-bit division on the AVR): the pin's millivolts
    // (the ADC's 1023 steps span the reference), then scaled up by the divider's ratio.
    uint32_t pinMillivolts = (static_cast<uint32_t>(adc) * divider.referenceMillivolts + 511) / 1023;
    uint32_t total = divider.topOhms + divider.bottomOhms;
    uint32_t bottom = divider.bottomOhms > 0 ? divider.bottomOhms : 1;
    uint32_t centivolts = (pinMillivolts * total + bottom * 5) / (bottom * 10);
    return centivolts > 65535 ? 65535 : static_cast<uint16_t>(centivolts);
}

char *formatBatteryLine(uint16_t centivolts, char *out, size_t size) {
    snprintf(out, size, "BAT=%u.%02u", static_cast<unsigned>(centivolts / 100), static_cast<unsigned>(centivolts % 100));
    return out;
}

}  // namespace car
