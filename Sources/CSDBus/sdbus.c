// The sd-bus calls DriveDBus makes, each forwarded to libsystemd.so.0, which is loaded on the first call
// (see include/CSDBus.h). The definitions take sd-bus.h's prototypes, so the compiler checks each one.
#include "CSDBus.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stddef.h>

static void *library;
static const char *load_error;
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

static void load(void) {
    // RTLD_LOCAL: its symbols (the same names as these forwarders) never take the place of ours.
    library = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!library) load_error = dlerror();
}

const char *carbridge_sd_bus_load_error(void) {
    pthread_once(&load_once, load);
    return library ? NULL : (load_error ? load_error : "libsystemd.so.0 cannot be loaded");
}

static void *resolve(const char *name) {
    pthread_once(&load_once, load);
    return library ? dlsym(library, name) : NULL;
}

// One forwarder: looks the function up once (a race only looks it up twice), then calls it; without
// the library, returns `failure`.
#define FORWARD(type, name, params, args, failure)                                   \
    type name params {                                                              \
        static type(*volatile target) params;                                       \
        if (!target) target = (type(*) params)resolve(#name);                       \
        return target ? target args : (failure);                                    \
    }

FORWARD(int, sd_bus_new, (sd_bus **ret), (ret), -ELIBACC)
FORWARD(int, sd_bus_open_system, (sd_bus **ret), (ret), -ELIBACC)
FORWARD(int, sd_bus_set_address, (sd_bus *bus, const char *address), (bus, address), -ELIBACC)
FORWARD(int, sd_bus_set_bus_client, (sd_bus *bus, int b), (bus, b), -ELIBACC)
FORWARD(int, sd_bus_start, (sd_bus *bus), (bus), -ELIBACC)
FORWARD(sd_bus *, sd_bus_unref, (sd_bus *bus), (bus), NULL)
FORWARD(int, sd_bus_get_fd, (sd_bus *bus), (bus), -ELIBACC)
FORWARD(int, sd_bus_get_events, (sd_bus *bus), (bus), -ELIBACC)
FORWARD(int, sd_bus_get_timeout, (sd_bus *bus, uint64_t *timeout_usec), (bus, timeout_usec), -ELIBACC)
FORWARD(int, sd_bus_process, (sd_bus *bus, sd_bus_message **r), (bus, r), -ELIBACC)
FORWARD(int, sd_bus_send, (sd_bus *bus, sd_bus_message *m, uint64_t *cookie), (bus, m, cookie), -ELIBACC)
FORWARD(int, sd_bus_call_async,
        (sd_bus *bus, sd_bus_slot **slot, sd_bus_message *m, sd_bus_message_handler_t callback, void *userdata,
         uint64_t usec),
        (bus, slot, m, callback, userdata, usec), -ELIBACC)
FORWARD(int, sd_bus_match_signal_async,
        (sd_bus *bus, sd_bus_slot **ret, const char *sender, const char *path, const char *interface,
         const char *member, sd_bus_message_handler_t match_callback, sd_bus_message_handler_t add_callback,
         void *userdata),
        (bus, ret, sender, path, interface, member, match_callback, add_callback, userdata), -ELIBACC)
FORWARD(int, sd_bus_add_object,
        (sd_bus *bus, sd_bus_slot **slot, const char *path, sd_bus_message_handler_t callback, void *userdata),
        (bus, slot, path, callback, userdata), -ELIBACC)
FORWARD(sd_bus_slot *, sd_bus_slot_unref, (sd_bus_slot *slot), (slot), NULL)
FORWARD(int, sd_bus_reply_method_error, (sd_bus_message *call, const sd_bus_error *e), (call, e), -ELIBACC)
FORWARD(int, sd_bus_message_new_method_call,
        (sd_bus *bus, sd_bus_message **m, const char *destination, const char *path, const char *interface,
         const char *member),
        (bus, m, destination, path, interface, member), -ELIBACC)
FORWARD(int, sd_bus_message_new_method_return, (sd_bus_message *call, sd_bus_message **m), (call, m), -ELIBACC)
FORWARD(sd_bus_message *, sd_bus_message_unref, (sd_bus_message *m), (m), NULL)
FORWARD(int, sd_bus_message_append_basic, (sd_bus_message *m, char type, const void *p), (m, type, p), -ELIBACC)
FORWARD(int, sd_bus_message_append_array, (sd_bus_message *m, char type, const void *ptr, size_t size),
        (m, type, ptr, size), -ELIBACC)
FORWARD(int, sd_bus_message_open_container, (sd_bus_message *m, char type, const char *contents),
        (m, type, contents), -ELIBACC)
FORWARD(int, sd_bus_message_close_container, (sd_bus_message *m), (m), -ELIBACC)
FORWARD(int, sd_bus_message_enter_container, (sd_bus_message *m, char type, const char *contents),
        (m, type, contents), -ELIBACC)
FORWARD(int, sd_bus_message_exit_container, (sd_bus_message *m), (m), -ELIBACC)
FORWARD(int, sd_bus_message_read_basic, (sd_bus_message *m, char type, void *p), (m, type, p), -ELIBACC)
FORWARD(int, sd_bus_message_peek_type, (sd_bus_message *m, char *type, const char **contents),
        (m, type, contents), -ELIBACC)
FORWARD(int, sd_bus_message_rewind, (sd_bus_message *m, int complete), (m, complete), -ELIBACC)
FORWARD(int, sd_bus_message_get_type, (sd_bus_message *m, uint8_t *type), (m, type), -ELIBACC)
FORWARD(const sd_bus_error *, sd_bus_message_get_error, (sd_bus_message *m), (m), NULL)
FORWARD(const char *, sd_bus_message_get_interface, (sd_bus_message *m), (m), NULL)
FORWARD(const char *, sd_bus_message_get_member, (sd_bus_message *m), (m), NULL)
FORWARD(const char *, sd_bus_message_get_path, (sd_bus_message *m), (m), NULL)
FORWARD(const char *, sd_bus_message_get_sender, (sd_bus_message *m), (m), NULL)

void sd_bus_close(sd_bus *bus) {
    static void (*volatile target)(sd_bus *);
    if (!target) target = (void (*)(sd_bus *))resolve("sd_bus_close");
    if (target) target(bus);
}
