/* SPDX-License-Identifier: MIT */
/* Start-up baseline: a C program that links nothing but libc. */
#include <string.h>

int main(int argc, char **argv)
{
    (void)argc;
    return strlen(argv[0]) > 0 ? 0 : 1;
}
