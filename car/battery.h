// The battery's status line (docs/protocol.md §7, docs/car.md "The battery"): the ADC reading of the
// divider's middle turned into the battery's voltage and written as `BAT=7.42`.
// Plain C++, so the host unit tests run the same code as the firmware.
#pragma once
#include <stddef.h>
#include <stdint.h>

namespace car {

/// How the battery reaches the ADC pin: through `topOhms` to the pin, `bottomOhms` from the pin to GND,
/// read against `referenceMillivolts` (the ADC's reference: AVcc, 5000 on an Uno or Nano).
struct BatteryDivider {
    uint16_t referenceMillivolts;
    uint32_t topOhms;
    uint32_t bottomOhms;
};

/// The battery's voltage in hundredths of a volt for a 10-bit ADC reading `adc` (0..1023), rounded.
uint16_t batteryCentivolts(uint16_t adc, const BatteryDivider &divider);

/// Writes `BAT=<volts with two decimals>` (e.g. `BAT=7.42`) into `out`, cut to `size`; returns `out`.
char *formatBatteryLine(uint16_t centivolts, char *out, size_t size);

}  // namespace car
