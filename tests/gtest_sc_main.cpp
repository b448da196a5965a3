// Debian's libsystemc.so holds main() and calls sc_main(); our test binaries run GoogleTest
// from there. gtest_discover_tests runs each test in its own process, so every test that calls
// sc_start gets a fresh SystemC kernel.
#include <gtest/gtest.h>
#include <systemc>

int sc_main(int argc, char* argv[]) {
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
