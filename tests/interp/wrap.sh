#!/bin/sh
# Interpret mode: a one-line C++ unit that includes kernel source $1 by its
# absolute path (so its own relative #includes resolve), written to $2.
printf '#include "%s"\n' "$(realpath "$1")" >"$2"
