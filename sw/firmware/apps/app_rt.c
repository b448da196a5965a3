/* Every SSD App's runtime (Willow Section 3.1 "Building an SSD App"): the stub handlers and
 * called functions return to, which hands their a0 to SPU-OS with the "done" system call. */
#include "spu_app.h"

#define STR_(x) #x
#define STR(x) STR_(x)

__attribute__((naked, used)) void spu_app_done(void) {
    __asm__ volatile("li a7, " STR(SPU_SYS_DONE) "\n\tecall\n\tj spu_app_done");
}
