// sd-bus from libsystemd (Debian: libsystemd-dev for the header, libsystemd0 at run time), loaded with
// dlopen(3) the first time a call is made (sdbus.c), so a run that never talks to D-Bus (BlueZ) does not
// map libsystemd and the six libraries it links. The declarations are sd-bus.h's own.
// Swift cannot call C variadic functions, so DriveDBus uses only the fixed-signature calls
// (`*_append_basic`, `*_append_array`, `*_read_basic`, `*_open_container`, `*_enter_container`,
// `sd_bus_add_object`, …),
// and only those are defined here.
#ifndef CARBRIDGE_CSDBUS_H
#define CARBRIDGE_CSDBUS_H
#include <systemd/sd-bus.h>

/// Why libsystemd.so.0 could not be loaded (dlerror's text), or NULL once it is loaded; loads it if
/// no call has yet. Every sd-bus call above fails with -ELIBACC while it cannot be loaded.
const char *carbridge_sd_bus_load_error(void);
#endif
