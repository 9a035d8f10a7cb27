#!/usr/bin/env python3
"""scripts/kernel_coverage.py's check of the CTA sizes interpret mode launched against
what a GPU launches: the register arithmetic by hand, each refusal, and the two parsers
on cuobjdump text written in its format. Usage: kernel_limits.py (exit 0 when all hold)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import kernel_coverage as kc  # noqa: E402

failed = 0


def expect(what, got, want):
    global failed
    if got != want:
        print("FAIL %s: got %r, want %r" % (what, got, want))
        failed += 1
    else:
        print("ok   %s" % what)


# Registers a CTA holds: warps x (registers x 32 rounded up to 256).
expect("255 registers, 256 threads: 8 warps of 8160 -> 8192", kc.cta_registers(255, 256), 65536)
expect("255 registers, 288 threads: 9 warps of 8192", kc.cta_registers(255, 288), 73728)
expect("168 registers, 384 threads: 12 warps of 5376 (a multiple of 256)", kc.cta_registers(168, 384), 64512)
expect("33 registers, 33 threads: 2 warps of 1056 -> 1280", kc.cta_registers(33, 33), 2560)
expect("1 register, 1 thread: one warp of 32 -> 256", kc.cta_registers(1, 1), 256)

# What a GPU refuses: past the launch bounds, or past 64 K registers a CTA.
limits = {
    "bounded": {"sm_90": (128, 256), "sm_80": (96, 256)},
    "unbounded": {"sm_90": (168, None)},
    "fits": {"sm_90": (255, 256)},
}
launches = {"bounded": {128, 256, 384}, "unbounded": {384, 416}, "fits": {256}, "not in the SASS": {2048}}
got = kc.launch_problems(launches, limits)
expect("refusals", got, [
    "bounded: 384 threads a CTA, over the 256 its launch bounds allow on sm_80",
    "bounded: 384 threads a CTA, over the 256 its launch bounds allow on sm_90",
    "unbounded: 416 threads a CTA at 168 registers each hold 69888 registers on sm_90, over 65536",
])
expect("nothing refused at the bounds and 64 K registers exactly",
       kc.launch_problems({"bounded": {256}, "fits": {256}}, limits), [])

# The parsers, on text in cuobjdump's format: an ELF part per architecture, a PTX part (whose
# lines are not the SASS's) between them.
res_usage = """
Fatbin elf code:
================
arch = sm_80
code version = [1,8]
host = linux
compile_size = 64bit

Resource usage:
 Common:
  GLOBAL:0
 Function _Z1kv:
  REG:40 STACK:0 SHARED:0 LOCAL:0 CONSTANT[0]:896 TEXTURE:0 SURFACE:0 SAMPLER:0
 Function _Z1jv:
  REG:255 STACK:0 SHARED:0 LOCAL:0 CONSTANT[0]:896 TEXTURE:0 SURFACE:0 SAMPLER:0

Fatbin ptx code:
================
arch = sm_90
 Function _Z1kv:
  REG:7 STACK:0 SHARED:0 LOCAL:0

Fatbin elf code:
================
arch = sm_90
Resource usage:
 Function _Z1kv:
  REG:64 STACK:0 SHARED:0 LOCAL:0 CONSTANT[0]:896 TEXTURE:0 SURFACE:0 SAMPLER:0
"""
expect("registers by kernel and architecture", kc.registers_of(res_usage),
       {("_Z1kv", "sm_80"): 40, ("_Z1jv", "sm_80"): 255, ("_Z1kv", "sm_90"): 64})
elf = """
Fatbin elf code:
================
arch = sm_90

.nv.info._Z1kv
\t<0x1>
\tAttribute:\tEIATTR_MAXREG_COUNT
\tFormat:\tEIFMT_HVAL
\tValue:\t0xff
\t<0x2>
\tAttribute:\tEIATTR_MAX_THREADS
\tFormat:\tEIFMT_SVAL
\tValue:\t0x80 0x2 0x1 
\t<0x3>
\tAttribute:\tEIATTR_CBANK_PARAM_SIZE
\tFormat:\tEIFMT_HVAL
\tValue:\t0x94

.nv.info._Z1jv
\t<0x1>
\tAttribute:\tEIATTR_EXIT_INSTR_OFFSETS
\tFormat:\tEIFMT_SVAL
\tValue:\t0x90 0x1a0 0x230 

.section .nv.info._Z1iv
\tAttribute:\tEIATTR_MAX_THREADS
\tValue:\t0x400 0x1 0x1 

Fatbin ptx code:
================
arch = sm_80
.nv.info._Z1jv
\tAttribute:\tEIATTR_MAX_THREADS
\tValue:\t0x20 0x1 0x1 
"""
expect("launch bounds: x * y * z of EIATTR_MAX_THREADS, none where a kernel has none",
       kc.launch_bounds_of(elf), {("_Z1kv", "sm_90"): 256})

print("%d failed" % failed)
sys.exit(1 if failed else 0)
