# Shared by scripts/install-deps.sh and scripts/deps/*.sh (sourced): installs what is missing.

# apt_install PKG...: the Debian packages not yet installed, with one apt-get call.
apt_install() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "install-deps: installing ${missing[*]}"
  local sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  if [ -z "${PLX_APT_UPDATED:-}" ]; then
    $sudo_cmd apt-get update -qq
    export PLX_APT_UPDATED=1
  fi
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
}

# pip_install IMPORT:PACKAGE...: the Python packages whose module cannot be imported.
pip_install() {
  local missing=() pair
  for pair in "$@"; do
    python3 -c "import ${pair%%:*}" 2>/dev/null || missing+=("${pair#*:}")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "install-deps: pip installing ${missing[*]}"
  python3 -m pip install -q "${missing[@]}" 2>/dev/null ||
    python3 -m pip install -q --break-system-packages "${missing[@]}"
}
