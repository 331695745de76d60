#include "frame_parser.h"

namespace car {

bool isMotion(char type) {
    switch (type) {
    case 'M': case 'L': case 'R': case 'B': case 'X': case 'Y': return true;
    default: return false;
    }
}

namespace {

bool isFunction(char type) { return type >= 'F' && type <= 'J'; }

/// `-?(0|[1-9][0-9]*)`, not `-0`, at most 6 digits (as carbridge's CarFrameParser).
bool plainInteger(const char *text, uint8_t length, int32_t &value) {
    uint8_t i = 0;
    bool negative = false;
    if (length > 0 && text[0] == '-') {
        negative = true;
        i = 1;
    }
    uint8_t digits = length - i;
    if (digits == 0 || digits > 6) return false;
    if (digits > 1 && text[i] == '0') return false;
    int32_t v = 0;
    for (; i < length; i++) {
        char c = text[i];
        if (c < '0' || c > '9') return false;
        v = v * 10 + (c - '0');
    }
    if (negative && v == 0) return false;
    value = negative ? -v : v;
    return true;
}

/// The motion letter for D and the sign of A (docs/protocol.md §2).
char motionLetter(int32_t direction, int32_t range) {
    if (direction == 1) return range < 0 ? 'L' : (range > 0 ? 'R' : 'M');
    return range < 0 ? 'X' : (range > 0 ? 'Y' : 'B');
}

}  // namespace

bool parseFrame(const char *line, uint8_t length, Frame &out) {
    // Split into exactly four fields.
    uint8_t starts[4];
    uint8_t ends[4];
    uint8_t field = 0;
    starts[0] = 0;
    for (uint8_t i = 0; i < length; i++) {
        if (line[i] == ',') {
            if (field == 3) return false;
            ends[field] = i;
            field++;
            starts[field] = i + 1;
        }
    }
    if (field != 3) return false;
    ends[3] = length;
    if (ends[0] - starts[0] != 1) return false;
    char type = line[0];
    if (!isMotion(type) && !isFunction(type) && type != 'E') return false;
    int32_t values[3];
    for (uint8_t f = 1; f < 4; f++) {
        if (!plainInteger(line + starts[f], ends[f] - starts[f], values[f - 1])) return false;
    }
    int32_t range = values[0], speed = values[1], direction = values[2];
    if (type == 'E') {
        if (range != 0 || speed != 0 || direction != 0) return false;
    } else {
        if (range < -2 || range > 2) return false;
        if (speed < 0 || speed > 240 || speed % 10 != 0) return false;
        if (direction != 0 && direction != 1) return false;
        if (isMotion(type) && motionLetter(direction, range) != type) return false;
    }
    out.type = type;
    out.range = static_cast<int8_t>(range);
    out.speed = static_cast<uint8_t>(speed);
    out.direction = static_cast<uint8_t>(direction);
    return true;
}

LineAssembler::Result LineAssembler::push(uint8_t byte) {
    if (ready_) {
        ready_ = false;
        length_ = 0;
    }
    if (byte == '\n') {
        bool tooLong = overflow_;
        overflow_ = false;
        if (!tooLong && length_ > 0 && buffer_[length_ - 1] == '\r') length_--;
        if (tooLong || length_ > kMaxLine) {
            length_ = 0;
            return kTooLong;
        }
        buffer_[length_] = 0;
        ready_ = true;
        return kLine;
    }
    if (overflow_) return kNone;
    // Room for the bound plus one `\r` before the `\n`; beyond that the line is lost whole.
    if (length_ >= kMaxLine + 1) {
        overflow_ = true;
        length_ = 0;
        return kNone;
    }
    buffer_[length_++] = static_cast<char>(byte);
    return kNone;
}

}  // namespace car
