// A tiny test runner for the firmware's host tests: TEST(name) { CHECK(…); } registers a test;
// main() runs them all and prints `N passed, N failed` (a test fails if any CHECK in it fails).
#pragma once
#include <stdio.h>

namespace testing {

struct TestCase {
    const char *name;
    void (*body)();
    TestCase *next;
};

inline TestCase *&registry() {
    static TestCase *head = 0;
    return head;
}
inline bool &currentFailed() {
    static bool failed = false;
    return failed;
}
inline int &passedCount() {
    static int n = 0;
    return n;
}
inline int &failedCount() {
    static int n = 0;
    return n;
}

struct Registrar {
    TestCase test;
    Registrar(const char *name, void (*body)()) {
        test.name = name;
        test.body = body;
        test.next = 0;
        TestCase **tail = &registry();
        while (*tail) tail = &(*tail)->next;
        *tail = &test;
    }
};

inline void check(bool ok, const char *text, const char *file, int line) {
    if (ok) return;
    currentFailed() = true;
    printf("  CHECK failed: %s (%s:%d)\n", text, file, line);
}

/// Counts one finished test (also used for data-driven cases such as the vector file's lines).
inline void record(const char *name, bool failed) {
    if (failed) {
        failedCount()++;
        printf("FAIL %s\n", name);
    } else {
        passedCount()++;
    }
}

inline int runAll() {
    for (TestCase *t = registry(); t; t = t->next) {
        currentFailed() = false;
        t->body();
        record(t->name, currentFailed());
    }
    printf("%d passed, %d failed\n", passedCount(), failedCount());
    return failedCount() == 0 ? 0 : 1;
}

}  // namespace testing

#define TEST(name)                                                     \
    static void test_##name();                                         \
    static testing::Registrar registrar_##name(#name, test_##name);    \
    static void test_##name()
#define CHECK(cond) testing::check((cond), #cond, __FILE__, __LINE__)
