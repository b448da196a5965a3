/* A shared library that is not a Canopy host program: it says no ABI version. */
int canopy_host_main(void) { return 0; }
