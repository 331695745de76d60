// sd-bus from libsystemd (Debian: libsystemd-dev): the D-Bus client DriveBluetooth talks to BlueZ with.
// Swift cannot call C variadic functions, so DriveBluetooth uses only the fixed-signature calls
// (`*_append_basic`, `*_read_basic`, `*_open_container`, `*_enter_container`, `sd_bus_add_object`, …).
#ifndef CARBRIDGE_CSDBUS_SHIM_H
#define CARBRIDGE_CSDBUS_SHIM_H
#include <systemd/sd-bus.h>
#endif
