# Sourced by the scripts/install_*.sh scripts: installs Debian packages as root or through sudo,
# and says in one line what to install by hand where neither works.
#
#   apt_install WHO HINT PACKAGE...
#
# WHO names the calling script in messages, HINT what a person would install instead. The dpkg
# lock timeout lets two install scripts (or an unattended upgrade) run one after the other
# instead of failing.
apt_install() {
    local who="$1" hint="$2"
    shift 2
    local sudo=""
    if [ "$(id -u)" -ne 0 ]; then
        if ! command -v sudo >/dev/null 2>&1; then
            echo "$who: not root and no sudo; install $hint" >&2
            return 1
        fi
        sudo="sudo"
    fi
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "$who: apt-get unavailable; install $hint by hand" >&2
        return 1
    fi
    $sudo apt-get -o DPkg::Lock::Timeout=600 update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "$@"
}
