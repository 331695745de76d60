// libudev (Debian: libudev-dev).
#ifndef CARBRIDGE_CUDEV_SHIM_H
#define CARBRIDGE_CUDEV_SHIM_H
#include <libudev.h>
#endif
