// The car's strict frame parser (docs/protocol.md §2 and §8): plain C++, no Arduino headers, so
// the host unit tests compile the same code the firmware runs.
#pragma once
#include <stdint.h>

namespace car {

/// One valid frame: T,A,S,D.
struct Frame {
    char type;         ///< M L R B X Y (motion), F G H I J (F1-F5), E (engine off)
    int8_t range;      ///< A, -2..2
    uint8_t speed;     ///< S, 0..240 in steps of 10
    uint8_t direction; ///< D, 1 forward, 0 reverse
};

/// True for the motion letters M L R B X Y.
bool isMotion(char type);

/// Parses one line body (no terminator) of `length` bytes; true and `out` set only for a valid
/// frame. Anything else (wrong field count, `+`, spaces, leading zeros, `-0`, out-of-range values, a
/// letter that does not match D and A, `E` other than `E,0,0,0`) is rejected.
bool parseFrame(const char *line, uint8_t length, Frame &out);

/// Assembles bytes into lines of at most `kMaxLine` bytes (a valid frame is at most 10, `X,-2,240,0`).
/// A line ends at `\n`; one `\r` right before it is dropped. A longer line is thrown away whole, up
/// to and including its `\n`, so its tail can never be taken for a frame.
class LineAssembler {
public:
    static const uint8_t kMaxLine = 16;

    /// What one byte completed.
    enum Result : uint8_t {
        kNone,     ///< the line goes on
        kLine,     ///< a line is ready in `line()` / `length()`
        kTooLong,  ///< a line over the bound ended and was discarded
    };

    /// Takes one byte.
    Result push(uint8_t byte);
    /// The completed line (valid after `kLine` until the next `push`).
    const char *line() const { return buffer_; }
    /// Its length.
    uint8_t length() const { return length_; }

private:
    char buffer_[kMaxLine + 2];
    uint8_t length_ = 0;
    bool overflow_ = false;
    bool ready_ = false;
};

}  // namespace car
