// Host unit tests of the firmware's parser, motor mixing, failsafe and battery line (the same sources the AVR
// build compiles), plus the shared vectors in docs/car-vectors.txt. Usage: host-tests VECTORS_FILE
#include <stdlib.h>
#include <string.h>
#include <string>
#include <vector>
#include "../battery.h"
#include "../car_controller.h"
#include "test_runner.h"

using car::CarController;
using car::Frame;
using car::MotorCommand;

namespace {

/// A board that records what the controller did.
class FakeHardware : public car::CarHardware {
public:
    std::vector<MotorCommand> motorHistory;
    std::vector<int> functions;
    std::vector<std::string> lines;
    void setMotors(const MotorCommand &command) override { motorHistory.push_back(command); }
    void functionPressed(uint8_t number) override { functions.push_back(number); }
    void sendLine(const char *line) override { lines.push_back(line); }
};

void feed(CarController &controller, const std::string &bytes, uint32_t now) {
    for (size_t i = 0; i < bytes.size(); i++) controller.receiveByte(static_cast<uint8_t>(bytes[i]), now);
}

bool running(const MotorCommand &m) { return m.left.duty > 0 || m.right.duty > 0; }

Frame frame(char type, int range, int speed, int direction) {
    Frame f;
    f.type = type;
    f.range = static_cast<int8_t>(range);
    f.speed = static_cast<uint8_t>(speed);
    f.direction = static_cast<uint8_t>(direction);
    return f;
}

}  // namespace

TEST(mix_forward_both_wheels_same_duty) {
    MotorCommand m = car::mix(frame('M', 0, 40, 1));
    CHECK(m.left.duty == 43 && m.right.duty == 43);
    CHECK(m.left.direction == 1 && m.right.direction == 1);
    CHECK(car::mix(frame('M', 0, 240, 1)).left.duty == 255);
    CHECK(car::mix(frame('M', 0, 10, 1)).left.duty == 11);
}

TEST(mix_left_slows_the_left_wheel_in_proportion) {
    MotorCommand one = car::mix(frame('L', -1, 40, 1));
    CHECK(one.right.duty == 43 && one.left.duty == 28);
    MotorCommand two = car::mix(frame('L', -2, 40, 1));
    CHECK(two.right.duty == 43 && two.left.duty == 14);
    CHECK(two.left.direction == 1);  // slowed, never reversed
    MotorCommand right = car::mix(frame('R', 2, 240, 1));
    CHECK(right.left.duty == 255 && right.right.duty == 85);
}

TEST(mix_never_spins_in_place) {
    for (int range = -2; range <= 2; range++) {
        for (int speed = 10; speed <= 240; speed += 10) {
            for (int direction = 0; direction <= 1; direction++) {
                MotorCommand m = car::mix(frame('M', range, speed, direction));
                CHECK(m.left.direction == m.right.direction);
                CHECK(m.left.duty > 0 && m.right.duty > 0);
            }
        }
    }
}

TEST(mix_reverse_and_stop) {
    MotorCommand back = car::mix(frame('B', 0, 40, 0));
    CHECK(back.left.direction == -1 && back.right.direction == -1 && back.left.duty == 43);
    MotorCommand backLeft = car::mix(frame('X', -1, 30, 0));
    CHECK(backLeft.left.duty < backLeft.right.duty && backLeft.left.direction == -1);
    MotorCommand stop = car::mix(frame('Y', 2, 0, 0));
    CHECK(stop.left.duty == 0 && stop.right.duty == 0 && stop.left.direction == 0 && stop.right.direction == 0);
    CHECK(!running(car::mix(frame('E', 0, 0, 0))));
}

TEST(boot_leaves_motors_off_and_says_ready) {
    FakeHardware hw;
    CarController c(hw, 300);
    c.begin();
    CHECK(hw.motorHistory.size() == 1 && !running(hw.motorHistory[0]));
    CHECK(hw.lines.size() == 1 && hw.lines[0] == "OK car ready failsafe=300");
}

TEST(bytes_in_pieces_and_crlf) {
    FakeHardware hw;
    CarController c(hw, 300);
    feed(c, "M,0,", 0);
    CHECK(hw.motorHistory.empty());
    feed(c, "40,1\r", 0);
    CHECK(hw.motorHistory.empty());
    feed(c, "\n", 1);
    CHECK(hw.motorHistory.size() == 1 && hw.motorHistory[0].left.duty == 43);
    feed(c, "M,0,0,1\nL,-1,40,1\r\n", 2);
    CHECK(hw.motorHistory.size() == 3);
    CHECK(hw.motorHistory[2].left.duty == 28 && hw.motorHistory[2].right.duty == 43);
    CHECK(c.framesAccepted() == 3);
}

TEST(overlong_line_is_thrown_away_whole) {
    FakeHardware hw;
    CarController c(hw, 300);
    // 40 bytes, the last 8 a valid frame: the tail must never be taken for a frame.
    feed(c, std::string(32, 'x') + "M,0,40,1\n", 0);
    CHECK(hw.motorHistory.empty());
    CHECK(hw.lines.size() == 1 && hw.lines[0] == "ERR too long");
    // Exactly at the bound (16 bytes) it is an ordinary bad line; the next frame works.
    feed(c, std::string(8, 'x') + "M,0,40,1\n", 0);
    CHECK(hw.lines.size() == 2 && hw.lines[1] == "ERR bad frame");
    feed(c, "M,0,40,1\n", 0);
    CHECK(hw.motorHistory.size() == 1 && running(hw.motorHistory[0]));
    // A very long line (no terminator for 1000 bytes) costs no memory and is dropped.
    feed(c, std::string(1000, 'M') + "\r\nM,0,0,1\n", 10);
    CHECK(hw.motorHistory.size() == 2 && !running(hw.motorHistory[1]));
}

TEST(bad_frames_move_nothing) {
    FakeHardware hw;
    CarController c(hw, 300);
    feed(c, "M,0,45,1\nM,0,4\n0,1\nM,0,40,1\r\r\n\n\r\nE,0,0,1\n", 0);
    CHECK(hw.motorHistory.empty());
    CHECK(c.framesAccepted() == 0 && c.linesDiscarded() == 7);
}

TEST(function_frames_call_hooks_without_moving) {
    FakeHardware hw;
    CarController c(hw, 300);
    feed(c, "F,0,0,1\nG,0,0,1\nJ,2,240,0\n", 0);
    CHECK(hw.functions.size() == 3 && hw.functions[0] == 1 && hw.functions[1] == 2 && hw.functions[2] == 5);
    CHECK(hw.motorHistory.empty());
}

TEST(failsafe_stops_at_exactly_the_timeout) {
    FakeHardware hw;
    CarController c(hw, 300);
    feed(c, "M,0,50,1\n", 1000);
    c.tick(1299);
    CHECK(c.moving() && running(c.motors()));
    c.tick(1300);
    CHECK(!c.moving() && !running(c.motors()));
    CHECK(c.failsafeStops() == 1);
    CHECK(!hw.lines.empty() && hw.lines.back() == "CAR failsafe stop");
    c.tick(5000);
    CHECK(c.failsafeStops() == 1 && hw.motorHistory.size() == 2);
}

TEST(failsafe_across_millis_wraparound) {
    FakeHardware hw;
    CarController c(hw, 300);
    feed(c, "M,0,50,1\n", 0xFFFFFF00u);
    c.tick(0x00000010u);  // 272 ms later, after the wrap
    CHECK(c.moving());
    c.tick(0x0000002Cu);  // 300 ms
    CHECK(!c.moving());
}

TEST(failsafe_zero_disables_it) {
    FakeHardware hw;
    CarController c(hw, 0);
    feed(c, "M,0,50,1\n", 0);
    c.tick(100000);
    CHECK(c.moving() && running(c.motors()));
}

// The battery: the reference divider (10k/10k, AVcc 5 V) as car.ino has it.
static const car::BatteryDivider HALF = {5000, 10000, 10000};

static std::string batteryLine(uint16_t centivolts) {
    char line[12];
    return car::formatBatteryLine(centivolts, line, sizeof line);
}

TEST(battery_line_has_volts_with_two_decimals) {
    CHECK(batteryLine(742) == "BAT=7.42");
    CHECK(batteryLine(800) == "BAT=8.00");
    CHECK(batteryLine(605) == "BAT=6.05");
    CHECK(batteryLine(5) == "BAT=0.05");
    CHECK(batteryLine(65535) == "BAT=655.35");
}

TEST(battery_scaling_through_the_divider) {
    // 4.000 V at the pin reads 818 (1023 steps over 5 V): 8.00 V at the battery through 1:2.
    CHECK(car::batteryCentivolts(818, HALF) == 800);
    // 3.300 V at the pin reads 675: 6.60 V.
    CHECK(car::batteryCentivolts(675, HALF) == 660);
    CHECK(car::batteryCentivolts(0, HALF) == 0);
    CHECK(car::batteryCentivolts(1023, HALF) == 1000);
    // 10k over 4.7k: the pin sees 4.7/14.7 of the battery; full scale is 15.64 V.
    const car::BatteryDivider third = {5000, 10000, 4700};
    CHECK(car::batteryCentivolts(1023, third) == 1564);
    CHECK(car::batteryCentivolts(2000, HALF) == 1000);  // out of range: clamped to full scale
}

/// Decodes a vector file's escapes: \s \r \n \t \\ \xNN.
static bool unescape(const std::string &text, std::string &out) {
    out.clear();
    for (size_t i = 0; i < text.size(); i++) {
        if (text[i] != '\\') {
            out += text[i];
            continue;
        }
        if (++i >= text.size()) return false;
        switch (text[i]) {
        case 's': out += ' '; break;
        case 'r': out += '\r'; break;
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case '\\': out += '\\'; break;
        case 'x':
            if (i + 2 >= text.size()) return false;
            out += static_cast<char>(strtol(text.substr(i + 1, 2).c_str(), 0, 16));
            i += 2;
            break;
        default: return false;
        }
    }
    return true;
}

/// One `accept`/`reject` vector, with both terminators.
static bool runFrameVector(bool expectValid, const std::string &line) {
    bool ok = true;
    const char *terminators[] = {"\n", "\r\n"};
    for (int t = 0; t < 2; t++) {
        FakeHardware hw;
        CarController c(hw, 300);
        feed(c, line + terminators[t], 0);
        bool accepted = c.framesAccepted() == 1;
        if (accepted != expectValid) ok = false;
        if (!expectValid && (!hw.motorHistory.empty() || !hw.functions.empty())) ok = false;
    }
    Frame f;
    if (line.size() < 256 && car::parseFrame(line.data(), static_cast<uint8_t>(line.size()), f) != expectValid) ok = false;
    return ok;
}

/// One `timeline MS: T:EVENT…` vector, ticking the controller every millisecond.
static bool runTimeline(const std::string &spec, std::string &why) {
    size_t colon = spec.find(':');
    if (colon == std::string::npos) {
        why = "no failsafe time";
        return false;
    }
    FakeHardware hw;
    CarController c(hw, static_cast<uint16_t>(atoi(spec.substr(0, colon).c_str())));
    c.begin();
    uint32_t now = 0;
    size_t pos = colon + 1;
    while (pos < spec.size()) {
        while (pos < spec.size() && spec[pos] == ' ') pos++;
        if (pos >= spec.size()) break;
        size_t end = spec.find(' ', pos);
        if (end == std::string::npos) end = spec.size();
        std::string event = spec.substr(pos, end - pos);
        pos = end;
        size_t c2 = event.find(':');
        uint32_t at = static_cast<uint32_t>(atol(event.substr(0, c2).c_str()));
        std::string what = event.substr(c2 + 1);
        while (now < at) c.tick(++now);
        c.tick(now);
        if (what == "moving" || what == "stopped") {
            bool moving = running(c.motors());
            if (moving != (what == "moving")) {
                why = "at " + event + " the motors were " + (moving ? "running" : "off");
                return false;
            }
        } else {
            std::string line;
            if (!unescape(what, line)) {
                why = "bad escape in " + what;
                return false;
            }
            feed(c, line + "\n", now);
        }
    }
    return true;
}

int main(int argc, char **argv) {
    if (argc > 1) {
        FILE *file = fopen(argv[1], "r");
        if (!file) {
            printf("cannot open %s\n", argv[1]);
            testing::record("vectors: open the file", true);
        } else {
            char buffer[1024];
            int vectors = 0;
            while (fgets(buffer, sizeof buffer, file)) {
                std::string raw(buffer);
                while (!raw.empty() && (raw[raw.size() - 1] == '\n')) raw.erase(raw.size() - 1);
                if (raw.empty() || raw[0] == '#') continue;
                vectors++;
                std::string name = "vector: " + raw;
                if (raw.compare(0, 7, "accept ") == 0 || raw.compare(0, 7, "reject ") == 0) {
                    std::string line;
                    bool ok = unescape(raw.substr(7), line) && runFrameVector(raw[0] == 'a', line);
                    testing::record(name.c_str(), !ok);
                } else if (raw.compare(0, 9, "timeline ") == 0) {
                    std::string why;
                    bool ok = runTimeline(raw.substr(9), why);
                    if (!ok) printf("  %s\n", why.c_str());
                    testing::record(name.c_str(), !ok);
                } else {
                    testing::record(("vector: unknown kind: " + raw).c_str(), true);
                }
            }
            fclose(file);
            if (vectors == 0) testing::record("vectors: the file has none", true);
        }
    }
    return testing::runAll();
}
