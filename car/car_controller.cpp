#include "car_controller.h"
#include <stdio.h>

namespace car {

MotorCommand motorsOff() {
    MotorCommand off;
    off.left.duty = 0;
    off.left.direction = 0;
    off.right = off.left;
    return off;
}

MotorCommand mix(const Frame &frame) {
    if (!isMotion(frame.type) || frame.speed == 0) return motorsOff();
    uint8_t outer = static_cast<uint8_t>((static_cast<uint16_t>(frame.speed) * 255 + 120) / 240);
    uint8_t steps = static_cast<uint8_t>(frame.range < 0 ? -frame.range : frame.range);
    uint8_t inner = static_cast<uint8_t>(static_cast<uint16_t>(outer) * (3 - steps) / 3);
    int8_t direction = frame.direction == 1 ? 1 : -1;
    MotorCommand command;
    command.left.direction = direction;
    command.right.direction = direction;
    command.left.duty = frame.range < 0 ? inner : outer;
    command.right.duty = frame.range > 0 ? inner : outer;
    return command;
}

CarController::CarController(CarHardware &hardware, uint16_t failsafeMs)
    : hardware_(hardware), failsafeMs_(failsafeMs), motors_(motorsOff()) {}

void CarController::begin() {
    setMotors(motorsOff());
    moving_ = false;
    char line[32];
    snprintf(line, sizeof line, "OK car ready failsafe=%u", static_cast<unsigned>(failsafeMs_));
    hardware_.sendLine(line);
}

void CarController::receiveByte(uint8_t byte, uint32_t nowMs) {
    switch (assembler_.push(byte)) {
    case LineAssembler::kNone:
        return;
    case LineAssembler::kTooLong:
        discarded_++;
        hardware_.sendLine("ERR too long");
        return;
    case LineAssembler::kLine: {
        Frame frame;
        if (!parseFrame(assembler_.line(), assembler_.length(), frame)) {
            discarded_++;
            hardware_.sendLine("ERR bad frame");
            return;
        }
        apply(frame, nowMs);
        return;
    }
    }
}

void CarController::apply(const Frame &frame, uint32_t nowMs) {
    accepted_++;
    // Any valid frame shows the link is alive; only motion and E frames move or stop the motors,
    // so after a failsafe stop an F frame (which repeats the old S) does not start them again.
    lastValidMs_ = nowMs;
    if (frame.type == 'E') {
        moving_ = false;
        setMotors(motorsOff());
    } else if (isMotion(frame.type)) {
        moving_ = frame.speed > 0;
        setMotors(mix(frame));
    } else {
        hardware_.functionPressed(static_cast<uint8_t>(frame.type - 'F' + 1));
    }
}

void CarController::tick(uint32_t nowMs) {
    if (failsafeMs_ == 0 || !moving_) return;
    // Unsigned subtraction: correct across millis() wrapping after 49 days.
    if (static_cast<uint32_t>(nowMs - lastValidMs_) < failsafeMs_) return;
    moving_ = false;
    failsafeStops_++;
    setMotors(motorsOff());
    hardware_.sendLine("CAR failsafe stop");
}

void CarController::setMotors(const MotorCommand &command) {
    motors_ = command;
    hardware_.setMotors(command);
}

}  // namespace car
