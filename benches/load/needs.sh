# Sourced by the load scripts: `needs TOOL…` stops the script at once, naming what to install,
# when a tool it runs is missing (a run without it would print empty figures, not fail).
needs() {
  local tool
  for tool in "$@"; do
    command -v "$tool" >/dev/null ||
      { echo "$0 needs $tool (e.g. apt-get install $tool)" >&2; exit 1; }
  done
}
