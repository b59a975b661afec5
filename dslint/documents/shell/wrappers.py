"""Commands that run another command: ``nohup``, ``env``, ``srun``, ``mpirun`` ...

The option tables say which options take a value, so that the wrapped command is found.
"""

from __future__ import annotations

# srun options that take no value (everything else takes one, unless written --opt=value)
SRUN_SHORT_FLAGS = frozenset("EhHklOQsuvXZI")
SRUN_LONG_FLAGS = frozenset(
    {
        "exclusive",
        "label",
        "unbuffered",
        "overlap",
        "pty",
        "quiet",
        "verbose",
        "kill-on-bad-exit",
        "no-kill",
        "help",
        "usage",
        "test-only",
        "disable-status",
        "multi-prog",
        "no-allocate",
        "exact",
        "spread-job",
        "whole",
        "oversubscribe",
        "contiguous",
        "reboot",
        "overcommit",
        "preserve-env",
        "x11",
        "hold",
        "immediate",
        "nice",
        "external-launcher",
        "send-libs",
        "version",
    }
)
# mpirun/mpiexec (Open MPI, MPICH, Intel MPI)
MPI_TWO_VALUES = frozenset({"mca", "gmca", "genv", "env"})
MPI_FLAGS = frozenset(
    {
        "allow-run-as-root",
        "oversubscribe",
        "v",
        "verbose",
        "report-bindings",
        "tag-output",
        "display-map",
        "display-allocation",
        "q",
        "quiet",
        "timestamp-output",
        "genvall",
        "genvnone",
        "noprefix",
        "enable-recovery",
        "use-hwthread-cpus",
        "bind-to-core",
        "bind-to-socket",
        "nolocal",
        "no-prefix",
        "l",
        "prepend-rank",
        "hostlist",
    }
)
