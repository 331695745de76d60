// carbridge's reference car firmware: Arduino Uno/Nano (ATmega328P, 16 MHz), an HC-05 on the
// hardware UART at 9600 baud, an L298N or TB6612 motor driver. See docs/car.md (wiring, building,
// flashing) and docs/protocol.md §8 (the car's side of the protocol and the failsafe).
#include <Arduino.h>
#include <avr/sleep.h>
#include "battery.h"
#include "car_controller.h"

// ---------------------------------------------------------------------------------------------
// The pin table: change these to match your wiring (docs/car.md, "Adapting the pin table").
// The PWM pins must be PWM-capable (3, 5, 6, 9, 10, 11 on an Uno/Nano).
struct MotorPins {
    uint8_t pwm;      // L298N ENA/ENB, TB6612 PWMA/PWMB
    uint8_t forward;  // L298N IN1/IN3, TB6612 AIN1/BIN1: high to go forward
    uint8_t reverse;  // L298N IN2/IN4, TB6612 AIN2/BIN2: high to go backward
};
static const MotorPins LEFT_MOTOR = {5, 7, 8};
static const MotorPins RIGHT_MOTOR = {6, 9, 10};
static const int8_t STANDBY_PIN = -1;     // TB6612 STBY (driven high); -1 = none (L298N)
static const uint8_t HORN_PIN = 4;        // F1: a buzzer, on for HORN_MS
static const uint8_t LIGHT_PIN = 13;      // F2: a light, toggled (13 = the on-board LED)
static const uint8_t BATTERY_PIN = A0;    // the middle of the battery's divider (BATTERY_DIVIDER)
// ---------------------------------------------------------------------------------------------

static const uint32_t BAUD = 9600;                   // the HC-05's default
static const uint16_t HORN_MS = 200;
static const uint32_t BATTERY_PERIOD_MS = 2000;      // one `BAT=<volts>` line every 2 s
// The battery's divider (docs/car.md): 10k from the battery's + to A0, 10k from A0 to GND, so the pin
// sees half the battery (a 2S pack's 8.4 V → 4.2 V); read against AVcc (5 V). Change it here only.
static const car::BatteryDivider BATTERY_DIVIDER = {5000, 10000, 10000};

/// The board behind the controller: the motor driver's pins, the hooks and the UART.
class BoardHardware : public car::CarHardware {
public:
    void begin() {
        const MotorPins *motors[] = {&LEFT_MOTOR, &RIGHT_MOTOR};
        for (const MotorPins *m : motors) {
            pinMode(m->pwm, OUTPUT);
            pinMode(m->forward, OUTPUT);
            pinMode(m->reverse, OUTPUT);
        }
        if (STANDBY_PIN >= 0) {
            pinMode(STANDBY_PIN, OUTPUT);
            digitalWrite(STANDBY_PIN, HIGH);
        }
        pinMode(HORN_PIN, OUTPUT);
        pinMode(LIGHT_PIN, OUTPUT);
    }

    void setMotors(const car::MotorCommand &command) override {
        drive(LEFT_MOTOR, command.left);
        drive(RIGHT_MOTOR, command.right);
    }

    void functionPressed(uint8_t number) override {
        switch (number) {
        case 1:  // F1: the horn
            digitalWrite(HORN_PIN, HIGH);
            hornOn_ = true;
            hornSince_ = millis();
            break;
        case 2:  // F2: the light
            lightOn_ = !lightOn_;
            digitalWrite(LIGHT_PIN, lightOn_ ? HIGH : LOW);
            break;
        default:  // F3-F5: add your own hooks here
            break;
        }
    }

    void sendLine(const char *line) override {
        // Never block: a full TX buffer would hold up the loop, and with it the failsafe.
        size_t length = strlen(line);
        if (Serial.availableForWrite() < static_cast<int>(length + 1)) return;
        Serial.write(reinterpret_cast<const uint8_t *>(line), length);
        Serial.write('\n');
    }

    void poll(uint32_t now) {
        if (hornOn_ && now - hornSince_ >= HORN_MS) {
            digitalWrite(HORN_PIN, LOW);
            hornOn_ = false;
        }
    }

private:
    static void drive(const MotorPins &pins, const car::Wheel &wheel) {
        // PWM off first, so the direction pins never switch under power.
        analogWrite(pins.pwm, 0);
        digitalWrite(pins.forward, wheel.direction > 0 ? HIGH : LOW);
        digitalWrite(pins.reverse, wheel.direction < 0 ? HIGH : LOW);
        if (wheel.direction != 0) analogWrite(pins.pwm, wheel.duty);
    }

    bool hornOn_ = false;
    uint32_t hornSince_ = 0;
    bool lightOn_ = false;
};

static BoardHardware board;
static car::CarController controller(board);
static uint32_t lastBatteryMs = 0;

// analogRead() waits for one conversion (about 0.1 ms), once every BATTERY_PERIOD_MS: far inside the
// failsafe's millisecond checks and the UART's receive buffer.
static void sendBattery() {
    char line[12];
    uint16_t centivolts = car::batteryCentivolts(static_cast<uint16_t>(analogRead(BATTERY_PIN)), BATTERY_DIVIDER);
    board.sendLine(car::formatBatteryLine(centivolts, line, sizeof line));
}

void setup() {
    board.begin();
    Serial.begin(BAUD);
    controller.begin();
    lastBatteryMs = millis();
}

void loop() {
    while (Serial.available() > 0) controller.receiveByte(static_cast<uint8_t>(Serial.read()), millis());
    uint32_t now = millis();
    controller.tick(now);
    board.poll(now);
    if (now - lastBatteryMs >= BATTERY_PERIOD_MS) {
        lastBatteryMs = now;
        sendBattery();
    }
    // Idle until the next interrupt: a UART byte, or Timer0's overflow every 1.024 ms (millis()),
    // so the failsafe is checked at least once a millisecond. PWM and the UART keep running.
    set_sleep_mode(SLEEP_MODE_IDLE);
    sleep_mode();
}
