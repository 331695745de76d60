// libevdev (Debian: libevdev-dev).
#ifndef CARBRIDGE_CEVDEV_SHIM_H
#define CARBRIDGE_CEVDEV_SHIM_H
#include <libevdev/libevdev.h>
#endif
