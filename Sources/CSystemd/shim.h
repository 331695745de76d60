// libsystemd's sd-daemon API: sd_notify, sd_watchdog_enabled (Debian: libsystemd-dev).
#ifndef CARBRIDGE_CSYSTEMD_SHIM_H
#define CARBRIDGE_CSYSTEMD_SHIM_H
#include <systemd/sd-daemon.h>
#endif
