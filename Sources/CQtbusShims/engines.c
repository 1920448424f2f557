/* SPDX-License-Identifier: MIT */
/*
 * One engine per process: noticing a second copy of the engine (qtbus.h, ONE ENGINE
 * PER PROCESS; docs/operations.md, "One engine per process").
 *
 * A process can hold two copies of the engine: libqtbus.so, and the one SwiftPM links
 * statically into a Swift program that uses QTEventBus.  A C plugin that program
 * dlopen()s binds to libqtbus.so's copy unless the program exports its own, and then
 * the two copies run side by side, each with its own qtbus_shared(), and never meet.
 * Neither copy can find the other by symbol (a program exports nothing by default), so
 * each carries an ELF note naming its `mark`: the descriptor is the distance from
 * itself to the mark, fixed when the object is linked (no relocation).  A copy that
 * starts being used marks itself and walks the notes of every loaded object
 * (dl_iterate_phdr) for another copy's mark in use.  Both store before they load
 * (seq_cst), so of two copies starting at once at least one sees the other.
 */
#define _GNU_SOURCE
#include "qtbus_shims.h"

#include <link.h>
#include <stdio.h>
#include <string.h>

/* Set once this copy of the engine made a bus or a queue. */
QTBUS_INTERNAL unsigned qtshim_engine_mark;

/* Name "qtbus", type "qbus", descriptor: the mark's address minus the descriptor's.
 * "R" (SHF_GNU_RETAIN): kept by --gc-sections although nothing refers to it. */
#define ENGINE_NOTE_TYPE 0x73756271u
__asm__(".pushsection .note.qtbus.engine,\"aR\",%note\n"
        ".balign 4\n"
        ".long 6\n"
        ".long 8\n"
        ".long 0x73756271\n"
        ".asciz \"qtbus\"\n"
        ".balign 4\n"
        ".quad qtshim_engine_mark - .\n"
        ".popsection\n");

static uintptr_t align_up(uintptr_t n, uintptr_t a) { return (n + a - 1) & ~(a - 1); }

/* dl_iterate_phdr's callback: sets *found when an object's notes name a mark in use
 * other than this copy's. */
static int scan_object(struct dl_phdr_info *info, size_t size, void *found)
{
    (void)size;
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE) continue;
        uintptr_t align = ph->p_align == 8 ? 8 : 4;
        uintptr_t start = info->dlpi_addr + ph->p_vaddr, end = start + ph->p_memsz;
        for (uintptr_t p = start; end - p >= sizeof(ElfW(Nhdr));) {
            ElfW(Nhdr) n;
            memcpy(&n, (const void *)p, sizeof n);
            uintptr_t desc = p + align_up(sizeof n + n.n_namesz, align);
            uintptr_t next = desc + align_up(n.n_descsz, align);
            if (next > end || next <= p) break;
            if (n.n_type == ENGINE_NOTE_TYPE && n.n_namesz == 6 && n.n_descsz == 8 &&
                memcmp((const void *)(p + sizeof n), "qtbus", 6) == 0) {
                int64_t distance;
                memcpy(&distance, (const void *)desc, sizeof distance);
                const unsigned *mark = (const unsigned *)(desc + (uintptr_t)distance);
                if (mark != &qtshim_engine_mark && __atomic_load_n(mark, __ATOMIC_SEQ_CST)) *(int *)found = 1;
            }
            p = next;
        }
    }
    return 0;
}

/* The text qtbus_errmsg() and stderr give; the docs section it names tells the fix. */
static const char second_engine[] =
    "two qtbus engines are in use in this process (libqtbus.so and a copy linked into the "
    "program, or two libqtbus.so): each has its own qtbus_shared() and their events never "
    "meet; see docs/operations.md, \"One engine per process\"";

void qtshim_engine_used(void)
{
    if (__atomic_load_n(&qtshim_engine_mark, __ATOMIC_RELAXED)) return;
    if (__atomic_exchange_n(&qtshim_engine_mark, 1u, __ATOMIC_SEQ_CST)) return;
    int found = 0;
    dl_iterate_phdr(scan_object, &found);
    if (!found) return;
    qtshim_note(second_engine);
    fprintf(stderr, "qtbus: %s\n", second_engine);
}
