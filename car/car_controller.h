// What the car does with frames: motor mixing, F1-F5 hooks and the failsafe (docs/protocol.md §8).
// Plain C++ behind `CarHardware`, so the host unit tests run the same code as the firmware.
#pragma once
#include <stdint.h>
#include "frame_parser.h"

#ifndef FAILSAFE_MS
/// No valid frame for this long while S > 0 stops the motors (six 50 ms stream periods);
/// 0 disables the failsafe (a test build only: it exists to show the failsafe tests fail without it).
#define FAILSAFE_MS 300
#endif

namespace car {

/// One wheel: PWM duty 0..255 and which way it turns.
struct Wheel {
    uint8_t duty;       ///< 0 = off
    int8_t direction;   ///< 1 forward, -1 reverse, 0 off (both driver inputs low)
};

/// Both wheels.
struct MotorCommand {
    Wheel left;
    Wheel right;
};

/// The motors off.
MotorCommand motorsOff();

/// A motion frame's wheels: S 0..240 → duty 0..255 on the outer wheel; the inner wheel (left for
/// A < 0, right for A > 0) at (3 − |A|)/3 of it, never reversed, so one frame never spins the car in
/// place; D picks the direction of both. S = 0 → both off.
MotorCommand mix(const Frame &frame);

/// What the controller needs from the board.
class CarHardware {
public:
    /// Drives the motor driver's pins.
    virtual void setMotors(const MotorCommand &command) = 0;
    /// F1..F5 (number 1..5) was pressed.
    virtual void functionPressed(uint8_t number) = 0;
    /// Sends one line (without terminator) if the UART has room now; never blocks.
    virtual void sendLine(const char *line) = 0;

protected:
    ~CarHardware() {}
};

/// The car's state machine: idle (motors off) or moving, with the failsafe deadline.
class CarController {
public:
    /// `failsafeMs` = 0 disables the failsafe.
    CarController(CarHardware &hardware, uint16_t failsafeMs = FAILSAFE_MS);

    /// Motors off and the ready line.
    void begin();
    /// One byte from the UART, read at `nowMs`.
    void receiveByte(uint8_t byte, uint32_t nowMs);
    /// Checks the failsafe; call at least every few ms.
    void tick(uint32_t nowMs);

    /// True while a motion frame with S > 0 is being executed.
    bool moving() const { return moving_; }
    /// The motors as last set.
    const MotorCommand &motors() const { return motors_; }
    /// Valid frames accepted, lines discarded, failsafe stops.
    uint32_t framesAccepted() const { return accepted_; }
    uint32_t linesDiscarded() const { return discarded_; }
    uint32_t failsafeStops() const { return failsafeStops_; }

private:
    void apply(const Frame &frame, uint32_t nowMs);
    void setMotors(const MotorCommand &command);

    CarHardware &hardware_;
    uint16_t failsafeMs_;
    LineAssembler assembler_;
    MotorCommand motors_;
    bool moving_ = false;
    uint32_t lastValidMs_ = 0;
    uint32_t accepted_ = 0;
    uint32_t discarded_ = 0;
    uint32_t failsafeStops_ = 0;
};

}  // namespace car
