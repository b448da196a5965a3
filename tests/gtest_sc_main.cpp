// Debian's libsystemc.so holds main() and calls sc_main(); our test binaries run GoogleTest
// from there. gtest_discover_tests runs each test in its own process, so every test that calls
// sc_start gets a fresh SystemC kernel.
#include <gtest/gtest.h>

#include <cstdlib>
#include <systemc>

// SystemC prints its banner when the kernel starts, before sc_main; a static initialiser runs
// first.
static const bool kNoBanner = setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0) == 0;

int sc_main(int argc, char* argv[]) {
    (void)kNoBanner;
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
