/*
 * car-sim-avr: runs the car firmware's ELF on a simulated ATmega328P (libsimavr), puts its UART on a
 * pseudo-terminal (uart_pty from libsimavrparts), keeps simulated time in step with wall time and
 * records what the car does, with simulated timestamps in microseconds, one event a line:
 *
 *   PTY /dev/pts/N                           the car's serial port (carbridge run --link serial://…)
 *   MOTOR t L duty dir R duty dir            the motor driver's pins changed: duty 0..255, dir F R - (off) or B (brake)
 *   PIN t horn|light 0|1                     a hook pin changed
 *   RX t LINE                                a line the car's UART received (escaped), at its `\n`
 *   TX t LINE                                a line the car sent
 *   QUEUE t BYTES                            the most bytes waiting in front of the car's UART in the last
 *                                            100 ms (the pty's input queue and uart_pty's buffers), when not 0
 *   LAG t MS                                 simulated time fell more than MS behind wall time (once per second at most)
 *   END t rx_bytes=N tx_bytes=N max_lag_ms=N  on SIGTERM/SIGINT
 *
 * The pins are sampled every 50 µs of simulated time; a new state is reported once two samples agree,
 * with the first one's time. The motor pins are the firmware's default pin table (car/car.ino); a PWM pin's duty is its timer's
 * OCR while the timer drives the pin (COM bits set), else 0 or 255 from the port bit, as analogWrite()
 * leaves it. Usage: car-sim-avr [--battery-mv MV] [--out FILE] FIRMWARE.elf
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "avr_adc.h"
#include "avr_uart.h"
#include "sim_avr.h"
#include "sim_elf.h"
#include "sim_irq.h"
#include "uart_pty.h"

/* Data-space addresses of the ATmega328P registers the motor pins depend on. */
enum {
    REG_PORTB = 0x25, REG_PORTC = 0x28, REG_PORTD = 0x2B,
    REG_TCCR0A = 0x44, REG_OCR0A = 0x47, REG_OCR0B = 0x48,
    REG_TCCR1A = 0x80, REG_OCR1AL = 0x88, REG_OCR1BL = 0x8A,
    REG_TCCR2A = 0xB0, REG_OCR2A = 0xB3, REG_OCR2B = 0xB4,
};

/* An Arduino Uno pin: its port bit and, for the six PWM pins, its timer's COM bit and OCR. */
typedef struct {
    uint8_t port, bit;
    uint8_t tccr, com_bit, ocr; /* tccr 0 = not a PWM pin */
} uno_pin_t;

static uno_pin_t uno_pin(int pin) {
    uno_pin_t p = {0, 0, 0, 0, 0};
    if (pin < 8) { p.port = REG_PORTD; p.bit = (uint8_t)pin; }
    else if (pin < 14) { p.port = REG_PORTB; p.bit = (uint8_t)(pin - 8); }
    else { p.port = REG_PORTC; p.bit = (uint8_t)(pin - 14); }
    switch (pin) {
    case 3: p.tccr = REG_TCCR2A; p.com_bit = 5; p.ocr = REG_OCR2B; break;
    case 5: p.tccr = REG_TCCR0A; p.com_bit = 5; p.ocr = REG_OCR0B; break;
    case 6: p.tccr = REG_TCCR0A; p.com_bit = 7; p.ocr = REG_OCR0A; break;
    case 9: p.tccr = REG_TCCR1A; p.com_bit = 7; p.ocr = REG_OCR1AL; break;
    case 10: p.tccr = REG_TCCR1A; p.com_bit = 5; p.ocr = REG_OCR1BL; break;
    case 11: p.tccr = REG_TCCR2A; p.com_bit = 7; p.ocr = REG_OCR2A; break;
    }
    return p;
}

/* The firmware's default pin table (car/car.ino). */
static const int LEFT_PWM = 5, LEFT_FORWARD = 7, LEFT_REVERSE = 8;
static const int RIGHT_PWM = 6, RIGHT_FORWARD = 9, RIGHT_REVERSE = 10;
static const int HORN = 4, LIGHT = 13;

static avr_t *avr;
static FILE *out;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile sig_atomic_t stopping;
static uint64_t wall_start_ns;
static uint64_t max_lag_ns, last_lag_report_ns;
static uart_pty_t pty;
static unsigned queue_peak, queue_ticks, queue_max;
static unsigned long rx_bytes, tx_bytes;

static uint64_t wall_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t sim_us(void) { return avr->cycle / (avr->frequency / 1000000); }

static void emit(const char *format, ...) __attribute__((format(printf, 1, 2)));
static void emit(const char *format, ...) {
    va_list args;
    va_start(args, format);
    pthread_mutex_lock(&out_lock);
    vfprintf(out, format, args);
    fflush(out);
    pthread_mutex_unlock(&out_lock);
    va_end(args);
}

/* ---- the motor pins, sampled every 50 µs of simulated time ---- */

static int level(int pin) {
    uno_pin_t p = uno_pin(pin);
    return (avr->data[p.port] >> p.bit) & 1;
}

static int duty(int pin) {
    uno_pin_t p = uno_pin(pin);
    if (p.tccr && (avr->data[p.tccr] >> p.com_bit) & 1) return avr->data[p.ocr];
    return level(pin) ? 255 : 0;
}

static char direction(int forward, int reverse) {
    int f = level(forward), r = level(reverse);
    return f && r ? 'B' : f ? 'F' : r ? 'R' : '-';
}

typedef struct {
    int left_duty, right_duty, horn, light;
    char left_dir, right_dir;
} pins_t;

static pins_t last_pins = {-1, -1, -1, -1, 0, 0};
/* A new state is reported once two samples in a row agree, with the first one's time: the firmware
 * sets one wheel, then the other, a few µs apart, and those in-between states are not the car's. */
static pins_t pending_pins;
static uint64_t pending_since;
static int pending_count;

static int same_pins(const pins_t *a, const pins_t *b) {
    return a->left_duty == b->left_duty && a->right_duty == b->right_duty && a->left_dir == b->left_dir &&
           a->right_dir == b->right_dir && a->horn == b->horn && a->light == b->light;
}

static avr_cycle_count_t sample_pins(avr_t *a, avr_cycle_count_t when, void *param) {
    (void)a; (void)param;
    pins_t now;
    now.left_dir = direction(LEFT_FORWARD, LEFT_REVERSE);
    now.right_dir = direction(RIGHT_FORWARD, RIGHT_REVERSE);
    now.left_duty = now.left_dir == '-' ? 0 : duty(LEFT_PWM);
    now.right_duty = now.right_dir == '-' ? 0 : duty(RIGHT_PWM);
    now.horn = level(HORN);
    now.light = level(LIGHT);
    if (same_pins(&now, &last_pins)) {
        pending_count = 0;
        return when + avr->frequency / 20000;
    }
    if (!pending_count || !same_pins(&now, &pending_pins)) {
        pending_pins = now;
        pending_since = sim_us();
        pending_count = 1;
        return when + avr->frequency / 20000;
    }
    pending_count = 0;
    uint64_t t = pending_since;
    if (now.left_duty != last_pins.left_duty || now.right_duty != last_pins.right_duty ||
        now.left_dir != last_pins.left_dir || now.right_dir != last_pins.right_dir)
        emit("MOTOR %llu L %d %c R %d %c\n", (unsigned long long)t, now.left_duty, now.left_dir,
             now.right_duty, now.right_dir);
    if (now.horn != last_pins.horn) emit("PIN %llu horn %d\n", (unsigned long long)t, now.horn);
    if (now.light != last_pins.light) emit("PIN %llu light %d\n", (unsigned long long)t, now.light);
    last_pins = now;
    return when + avr->frequency / 20000;
}

static avr_uart_t *uart0;

/* The bytes between carbridge and the firmware: unread in the pty, in uart_pty's read buffer and fifo,
 * and in the UART's receive fifo (which the firmware reads at 9600 baud, one byte per 1.04 ms).
 * (TIOCOUTQ on the pty's slave side, what carbridge's link.max_in_flight reads, is always 0 on Linux.) */
static unsigned queued_bytes(void) {
    int unread = 0;
    if (ioctl(pty.pty.s, FIONREAD, &unread) != 0) unread = 0;
    size_t buffered = pty.pty.buffer_len > pty.pty.buffer_done ? pty.pty.buffer_len - pty.pty.buffer_done : 0;
    unsigned fifo = (unsigned)(pty.pty.out.write - pty.pty.out.read) & (uart_pty_fifo_fifo_size - 1);
    unsigned in_uart = uart0 ? ((unsigned)(uart0->input.write - uart0->input.read) & (uart_fifo_fifo_size - 1)) : 0;
    return (unsigned)unread + (unsigned)buffered + fifo + in_uart;
}

static void watch_queue(void) {
    unsigned queued = queued_bytes();
    if (queued > queue_peak) queue_peak = queued;
    if (queued > queue_max) queue_max = queued;
    if (++queue_ticks >= 100) {
        if (queue_peak) emit("QUEUE %llu %u\n", (unsigned long long)sim_us(), queue_peak);
        queue_peak = 0;
        queue_ticks = 0;
    }
}

/* ---- simulated time in step with wall time, checked every simulated millisecond ---- */

static avr_cycle_count_t pace(avr_t *a, avr_cycle_count_t when, void *param) {
    (void)a; (void)param;
    watch_queue();
    uint64_t sim_ns = avr->cycle * 1000ull / (avr->frequency / 1000000);
    uint64_t wall = wall_ns();
    uint64_t elapsed = wall - wall_start_ns;
    if (sim_ns > elapsed) {
        uint64_t ahead = sim_ns - elapsed;
        struct timespec ts = {(time_t)(ahead / 1000000000ull), (long)(ahead % 1000000000ull)};
        nanosleep(&ts, NULL);
    } else {
        uint64_t lag = elapsed - sim_ns;
        if (lag > max_lag_ns) max_lag_ns = lag;
        if (lag > 100000000ull && wall - last_lag_report_ns > 1000000000ull) {
            last_lag_report_ns = wall;
            emit("LAG %llu %llu\n", (unsigned long long)sim_us(), (unsigned long long)(lag / 1000000));
        }
    }
    return when + avr->frequency / 1000;
}

/* simavr's own sleep callback would usleep for the time the AVR sleeps; pace() does that instead. */
static void sleep_in_step(avr_t *a, avr_cycle_count_t how_long) { (void)a; (void)how_long; }

/* ---- the UART's lines, both ways ---- */

typedef struct {
    char text[256];
    size_t length;
    unsigned long *bytes;
    const char *tag;
} line_t;

static line_t rx_line = {{0}, 0, &rx_bytes, "RX"};
static line_t tx_line = {{0}, 0, &tx_bytes, "TX"};
static pthread_mutex_t line_lock = PTHREAD_MUTEX_INITIALIZER;

static void take_byte(line_t *line, uint8_t byte) {
    pthread_mutex_lock(&line_lock);
    (*line->bytes)++;
    if (byte == '\n') {
        line->text[line->length] = 0;
        emit("%s %llu %s\n", line->tag, (unsigned long long)sim_us(), line->text);
        line->length = 0;
    } else if (line->length + 5 < sizeof line->text) {
        if (byte >= 0x20 && byte < 0x7F && byte != '\\') {
            line->text[line->length++] = (char)byte;
        } else {
            line->length += (size_t)snprintf(line->text + line->length, 5, "\\x%02X", byte);
        }
    }
    pthread_mutex_unlock(&line_lock);
}

static void uart_rx_hook(avr_irq_t *irq, uint32_t value, void *param) {
    (void)irq; (void)param;
    take_byte(&rx_line, (uint8_t)value);
}

static void uart_tx_hook(avr_irq_t *irq, uint32_t value, void *param) {
    (void)irq; (void)param;
    take_byte(&tx_line, (uint8_t)value);
}

static void on_signal(int sig) { (void)sig; stopping = 1; }

int main(int argc, char **argv) {
    const char *elf = NULL, *out_path = NULL;
    int battery_mv = 4000; /* at the pin: 8.0 V through the 1:2 divider, 80 % */
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--battery-mv") && i + 1 < argc) battery_mv = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--out") && i + 1 < argc) out_path = argv[++i];
        else if (argv[i][0] != '-' && !elf) elf = argv[i];
        else {
            fprintf(stderr, "usage: car-sim-avr [--battery-mv MV] [--out FILE] FIRMWARE.elf\n");
            return 64;
        }
    }
    if (!elf) {
        fprintf(stderr, "car-sim-avr: no firmware ELF given\n");
        return 64;
    }
    /* Our records go to --out or the original stdout; libsimavr's own chatter to stderr. */
    int records = out_path ? open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644) : dup(1);
    if (records < 0 || !(out = fdopen(records, "w"))) {
        fprintf(stderr, "car-sim-avr: cannot open %s: %s\n", out_path ? out_path : "stdout", strerror(errno));
        return 1;
    }
    dup2(2, 1);

    elf_firmware_t firmware;
    memset(&firmware, 0, sizeof firmware);
    if (elf_read_firmware(elf, &firmware) != 0) {
        fprintf(stderr, "car-sim-avr: cannot read the firmware %s\n", elf);
        return 1;
    }
    if (!firmware.frequency) firmware.frequency = 16000000;
    if (!firmware.mmcu[0]) strcpy(firmware.mmcu, "atmega328p");
    avr = avr_make_mcu_by_name(firmware.mmcu);
    if (!avr) {
        fprintf(stderr, "car-sim-avr: simavr does not know the MCU %s\n", firmware.mmcu);
        return 1;
    }
    avr_init(avr);
    avr_load_firmware(avr, &firmware);
    avr->sleep = sleep_in_step;
    /* An Uno runs at 5 V with AVcc as the ADC's reference (analogRead's DEFAULT). */
    avr->vcc = avr->avcc = avr->aref = 5000;

    for (avr_io_t *io = avr->io_port; io; io = io->next)
        if (io->kind && !strcmp(io->kind, "uart") && !uart0) uart0 = (avr_uart_t *)io; /* the first is UART0 */
    uart_pty_init(avr, &pty);
    uart_pty_connect(&pty, '0');
    avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_INPUT), uart_rx_hook, NULL);
    avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUTPUT), uart_tx_hook, NULL);
    avr_raise_irq(avr_io_getirq(avr, AVR_IOCTL_ADC_GETIRQ, ADC_IRQ_ADC0), (uint32_t)battery_mv);

    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_signal;
    sigaction(SIGTERM, &action, NULL);
    sigaction(SIGINT, &action, NULL);
    signal(SIGPIPE, SIG_IGN);

    emit("PTY %s\n", pty.pty.slavename);
    wall_start_ns = wall_ns();
    avr_cycle_timer_register(avr, avr->frequency / 1000, pace, NULL);
    avr_cycle_timer_register(avr, 1, sample_pins, NULL);
    int state = cpu_Running;
    while (!stopping && state != cpu_Done && state != cpu_Crashed) state = avr_run(avr);
    emit("END %llu rx_bytes=%lu tx_bytes=%lu max_lag_ms=%llu max_queued_bytes=%u%s\n", (unsigned long long)sim_us(),
         rx_bytes, tx_bytes, (unsigned long long)(max_lag_ns / 1000000), queue_max, state == cpu_Crashed ? " crashed" : "");
    /* Not uart_pty_stop(): its thread would be interrupted by a SIGINT aimed at the whole process. */
    return state == cpu_Crashed ? 1 : 0;
}
