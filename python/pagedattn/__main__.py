"""python -m pagedattn info: the package, the library it loaded and the CUDA device."""
import sys


def info():
    import pagedattn
    from pagedattn._lib import lib
    print(f"pagedattn {pagedattn.__version__} (library version number {lib.pa_version_number()})")
    print(f"library: {pagedattn.lib_path}")
    print(f"package: {pagedattn.__file__}")
    n = pagedattn.device_count()
    if n == 0:
        print("CUDA: no CUDA device (the ops run on host arrays through the CPU reference)")
    for d in range(n):
        try:
            i = pagedattn.device_info(d)
        except Exception as e:  # noqa: BLE001 - print what the library says and go on
            print(f"CUDA device {d}: {e}")
            continue
        print(f"CUDA device {d}: {i['name']}, compute capability {i['compute_capability']}, {i['sm_count']} SMs, "
              f"{i['total_mem_bytes'] / 2**30:.1f} GiB, {i['smem_per_block_optin']} B shared memory per block, "
              f"driver {i['driver_version']}, runtime {i['runtime_version']}")
    frameworks = []
    for name in ("numpy", "torch", "cupy", "jax"):
        mod = sys.modules.get(name)
        if mod is None:
            try:
                mod = __import__(name)
            except Exception:  # noqa: BLE001 - absent or broken: not listed
                continue
        frameworks.append(f"{name} {getattr(mod, '__version__', '?')}")
    print("frameworks: " + (", ".join(frameworks) or "none"))
    return 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["info"]:
        return info()
    print("usage: python -m pagedattn info", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
