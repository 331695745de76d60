// toml++ behind the C API of include/CTOMLReader.h. The library is compiled into this file
// (TOML_HEADER_ONLY, set in Package.swift), so the binary needs no libtomlplusplus at run time.
// Parse errors come back as values (TOML_EXCEPTIONS=0): nothing may unwind through Swift frames.
#if !__has_include(<toml++/toml.h>)
#error "toml++ is missing: apt-get install libtomlplusplus-dev (scripts/install-deps.sh installs it)"
#endif

#include <toml++/toml.h>

#include <new>

#include "CTOMLReader.h"

struct ctoml_document {
    toml::parse_result result;
};

namespace {

const toml::node *node_cast(const ctoml_node *node) { return reinterpret_cast<const toml::node *>(node); }

const ctoml_node *node_handle(const toml::node *node) { return reinterpret_cast<const ctoml_node *>(node); }

}  // namespace

extern "C" {

ctoml_document *ctoml_parse(const char *text, size_t length) {
    return new (std::nothrow) ctoml_document{toml::parse(std::string_view(text, length))};
}

void ctoml_document_free(ctoml_document *document) { delete document; }

const char *ctoml_document_error(const ctoml_document *document, uint32_t *line, uint32_t *column) {
    if (document->result) return nullptr;
    const toml::parse_error &error = document->result.error();
    *line = error.source().begin.line;
    *column = error.source().begin.column;
    // The description is a std::string inside the error: NUL-terminated and owned by the document.
    return error.description().data();
}

const ctoml_node *ctoml_document_root(const ctoml_document *document) {
    if (!document->result) return nullptr;
    return node_handle(&document->result.table());
}

ctoml_type ctoml_node_type(const ctoml_node *node) {
    switch (node_cast(node)->type()) {
        case toml::node_type::none: return CTOML_NONE;
        case toml::node_type::table: return CTOML_TABLE;
        case toml::node_type::array: return CTOML_ARRAY;
        case toml::node_type::string: return CTOML_STRING;
        case toml::node_type::integer: return CTOML_INTEGER;
        case toml::node_type::floating_point: return CTOML_FLOATING_POINT;
        case toml::node_type::boolean: return CTOML_BOOLEAN;
        case toml::node_type::date: return CTOML_DATE;
        case toml::node_type::time: return CTOML_TIME;
        case toml::node_type::date_time: return CTOML_DATE_TIME;
    }
    return CTOML_NONE;
}

const ctoml_node *ctoml_table_get(const ctoml_node *table, const char *key, size_t key_length) {
    const toml::table *t = node_cast(table)->as_table();
    if (t == nullptr) return nullptr;
    return node_handle(t->get(std::string_view(key, key_length)));
}

size_t ctoml_table_count(const ctoml_node *table) {
    const toml::table *t = node_cast(table)->as_table();
    return t == nullptr ? 0 : t->size();
}

size_t ctoml_table_keys(const ctoml_node *table, ctoml_string *keys, size_t capacity) {
    const toml::table *t = node_cast(table)->as_table();
    if (t == nullptr) return 0;
    size_t count = 0;
    for (auto &&[key, value] : *t) {
        if (count == capacity) break;
        keys[count++] = ctoml_string{key.str().data(), key.str().size()};
    }
    return count;
}

bool ctoml_node_string(const ctoml_node *node, ctoml_string *value) {
    const toml::value<std::string> *v = node_cast(node)->as_string();
    if (v == nullptr) return false;
    *value = ctoml_string{v->get().data(), v->get().size()};
    return true;
}

bool ctoml_node_integer(const ctoml_node *node, int64_t *value) {
    const toml::value<int64_t> *v = node_cast(node)->as_integer();
    if (v == nullptr) return false;
    *value = v->get();
    return true;
}

bool ctoml_node_floating_point(const ctoml_node *node, double *value) {
    const toml::value<double> *v = node_cast(node)->as_floating_point();
    if (v == nullptr) return false;
    *value = v->get();
    return true;
}

bool ctoml_node_boolean(const ctoml_node *node, bool *value) {
    const toml::value<bool> *v = node_cast(node)->as_boolean();
    if (v == nullptr) return false;
    *value = v->get();
    return true;
}

}  // extern "C"
