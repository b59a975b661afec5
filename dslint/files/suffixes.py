"""The file names a walk reads: the suffixes of the kinds dslint classifies (its content decides the kind)."""

JSON_SUFFIXES = (".json", ".hjson", ".jsonc")
YAML_SUFFIXES = (".yaml", ".yml")
SCRIPT_SUFFIXES = (".sh", ".bash", ".slurm", ".sbatch", ".zsh")
