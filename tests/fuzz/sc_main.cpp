// Debian's libsystemc.so holds a `main` that calls sc_main, and so needs one to link. libFuzzer's
// own main runs the fuzz targets; this one is never called.
extern "C" int sc_main(int, char*[]) { return 0; }
