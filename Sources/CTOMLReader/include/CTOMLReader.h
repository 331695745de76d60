// A C view of toml++ (Debian's libtomlplusplus-dev, compiled header-only into this target): parse a
// document, walk its tables, read scalar values. Only what DriveConfig's ConfigDocument needs, so no
// Swift module has to import C++ (or Foundation, as TOMLKit's Swift layer did).
#ifndef CTOMLREADER_H
#define CTOMLREADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The result of one parse: the root table, or the syntax error. Owns every node in it.
typedef struct ctoml_document ctoml_document;

/// A node of a document (table, array or value), valid while its document lives.
typedef struct ctoml_node ctoml_node;

/// A node's TOML type (toml::node_type's order).
typedef enum ctoml_type {
    CTOML_NONE = 0,
    CTOML_TABLE,
    CTOML_ARRAY,
    CTOML_STRING,
    CTOML_INTEGER,
    CTOML_FLOATING_POINT,
    CTOML_BOOLEAN,
    CTOML_DATE,
    CTOML_TIME,
    CTOML_DATE_TIME,
} ctoml_type;

/// UTF-8 bytes owned by a document (not NUL-terminated as far as `length` is concerned).
typedef struct ctoml_string {
    const char *data;
    size_t length;
} ctoml_string;

/// Parses `length` bytes of `text`. Never NULL unless memory runs out; check `ctoml_document_error`.
ctoml_document *ctoml_parse(const char *text, size_t length);

/// Frees the document and every node and string in it.
void ctoml_document_free(ctoml_document *document);

/// The syntax error's description (owned by the document) and its 1-based line and column, or NULL
/// when the document parsed.
const char *ctoml_document_error(const ctoml_document *document, uint32_t *line, uint32_t *column);

/// The root table, or NULL when the document did not parse.
const ctoml_node *ctoml_document_root(const ctoml_document *document);

/// The node's type.
ctoml_type ctoml_node_type(const ctoml_node *node);

/// The value of `key` in `table`, or NULL when absent (or when `table` is not a table).
const ctoml_node *ctoml_table_get(const ctoml_node *table, const char *key, size_t key_length);

/// How many keys `table` has (0 for a non-table).
size_t ctoml_table_count(const ctoml_node *table);

/// Writes up to `capacity` of `table`'s keys to `keys`, in the table's order (toml++'s tables are
/// sorted maps: byte order of the keys); returns how many were written.
size_t ctoml_table_keys(const ctoml_node *table, ctoml_string *keys, size_t capacity);

/// The node's value when it has that type; false (and `*value` untouched) otherwise.
bool ctoml_node_string(const ctoml_node *node, ctoml_string *value);
bool ctoml_node_integer(const ctoml_node *node, int64_t *value);
bool ctoml_node_floating_point(const ctoml_node *node, double *value);
bool ctoml_node_boolean(const ctoml_node *node, bool *value);

#ifdef __cplusplus
}
#endif

#endif
