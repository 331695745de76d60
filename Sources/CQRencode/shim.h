// libqrencode (Debian: libqrencode-dev): the dashboard's join QR code.
#ifndef CARBRIDGE_CQRENCODE_SHIM_H
#define CARBRIDGE_CQRENCODE_SHIM_H
#include <qrencode.h>
#endif
