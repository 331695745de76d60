// BlueZ libbluetooth (Debian: libbluetooth-dev): RFCOMM sockets, HCI inquiry, SDP.
#ifndef CARBRIDGE_CBLUETOOTH_SHIM_H
#define CARBRIDGE_CBLUETOOTH_SHIM_H
#include <sys/socket.h>
#include <bluetooth/bluetooth.h>
#include <bluetooth/hci.h>
#include <bluetooth/hci_lib.h>
#include <bluetooth/rfcomm.h>
#include <bluetooth/sdp.h>
#include <bluetooth/sdp_lib.h>
/// Size of `struct sockaddr_rc`, for bind/connect.
static inline unsigned int cb_sockaddr_rc_size(void) { return (unsigned int)sizeof(struct sockaddr_rc); }
#endif
