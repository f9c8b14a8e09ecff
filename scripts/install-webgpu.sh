#!/usr/bin/env bash
# Installs what the WebGPU backend needs at run time into a project-local directory
# (default .deps/webgpu, or the first argument): Dawn's webgpu.h library from npm and a CPU
# Vulkan driver (lavapipe, Mesa 25 from bookworm-backports) with the Vulkan loader, and a
# second one (SwiftShader, from Debian's chromium-common) for a second test tier, all at
# pinned versions with checksums. Debian packages are fetched with a private apt
# configuration, so the system's apt sources are never changed. Safe to run again.
#
# Afterwards: source <dir>/env.sh, which sets NUMR_WEBGPU_LIB and VK_ICD_FILENAMES.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
dest=$(realpath -m "${1:-$repo/.deps/webgpu}")

dawn_pkg=bun-webgpu-linux-x64@0.1.7
dawn_tgz_sha=8badfecdad4e726ac12be4f29771f4cbd7ce7683b4418316a547c5bda94fb798
dawn_so_sha=3190c3777f2c07fcf6a0640833cbf5d0cde859dc53aed6d9083946d093198788

# Debian packages: name=version sha256-of-the-.deb. lavapipe's libraries beyond these come
# from the system (Mesa 25's lavapipe runs with bookworm's libdrm, libz, libexpat, ...).
debs=(
  "mesa-vulkan-drivers=25.0.7-2~bpo12+1 3899f1800424c60a05df5d6913076a526ca8fdbabec43672cd397563d1ca3263"
)
lvp_so_sha=ec746632947ef2ccb20930a674f026176ad00cc61a7d0f01f285dfc7e4104024

say() { echo "install-webgpu: $*"; }
die() { echo "install-webgpu: $*" >&2; exit 1; }
sha_of() { sha256sum "$1" | cut -d' ' -f1; }
check_sha() {  # file expected
  local got
  got=$(sha_of "$1")
  [[ "$got" == "$2" ]] || die "checksum mismatch for $1: got $got, expected $2"
}

mkdir -p "$dest/lib" "$dest/icd.d"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# ---- Dawn ----
if [[ -f "$dest/lib/libwebgpu_wrapper.so" && $(sha_of "$dest/lib/libwebgpu_wrapper.so") == "$dawn_so_sha" ]]; then
  say "Dawn present"
else
  command -v npm >/dev/null || die "npm is needed (Debian: apt-get install npm)"
  say "fetching $dawn_pkg"
  (cd "$work" && npm pack --silent "$dawn_pkg" >/dev/null)
  tgz=$(ls "$work"/bun-webgpu-linux-x64-*.tgz)
  check_sha "$tgz" "$dawn_tgz_sha"
  tar -xzf "$tgz" -C "$work" package/libwebgpu_wrapper.so
  check_sha "$work/package/libwebgpu_wrapper.so" "$dawn_so_sha"
  install -m 0755 "$work/package/libwebgpu_wrapper.so" "$dest/lib/libwebgpu_wrapper.so"
fi

# A private apt configuration over the machine's Debian mirror and its -backports suite
# (the system's sources are never changed); updated once.
private_apt() {
  [[ -n "${APT_CONFIG:-}" && "$APT_CONFIG" == "$dest/apt/apt.conf" ]] && return
  # The machine's Debian mirror (from its deb822 or one-line sources), plus -backports.
  mirror=$(grep -h -E '^URIs:.*debian/?$' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n1 |
           awk '{print $2}') || true
  if [[ -z "$mirror" ]]; then
    mirror=$(grep -h -E '^deb .*debian/? ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
             2>/dev/null | grep -v security | head -n1 | awk '{print $2}') || true
  fi
  mirror=${mirror:-http://deb.debian.org/debian}
  codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
  keyring=/usr/share/keyrings/debian-archive-keyring.gpg
  [[ -f $keyring ]] || die "$keyring is missing (package debian-archive-keyring)"
  apt_dir="$dest/apt"
  mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/parts" "$apt_dir/prefs"
  cat > "$apt_dir/sources.list" <<EOF
deb [signed-by=$keyring] $mirror $codename main
deb [signed-by=$keyring] $mirror $codename-backports main
EOF
  cat > "$apt_dir/apt.conf" <<EOF
Dir::Etc::SourceList "$apt_dir/sources.list";
Dir::Etc::SourceParts "$apt_dir/parts";
Dir::Etc::Preferences "$apt_dir/prefs/none";
Dir::Etc::PreferencesParts "$apt_dir/prefs";
Dir::State::Lists "$apt_dir/lists";
Dir::Cache "$apt_dir/cache";
APT::Sandbox::User "root";
EOF
  export APT_CONFIG="$apt_dir/apt.conf"
  say "apt-get update (private configuration in $apt_dir)"
  apt-get update -qq
}

# ---- Debian packages through a private apt configuration ----
need_debs=0
[[ -f "$dest/lib/libvulkan_lvp.so" && $(sha_of "$dest/lib/libvulkan_lvp.so") == "$lvp_so_sha" ]] || need_debs=1
if ! ls "$dest"/lib/libvulkan.so.1* >/dev/null 2>&1 && ! ldconfig -p | grep -q 'libvulkan.so.1 '; then
  need_debs=1
fi
if [[ $need_debs == 0 ]]; then
  say "lavapipe and the Vulkan loader present"
else
  private_apt
  pkgs=()
  for d in "${debs[@]}"; do pkgs+=("${d%% *}"); done
  # The loader, at the version of the system's suite, only when the system has none.
  if ! ldconfig -p | grep -q 'libvulkan.so.1 '; then pkgs+=(libvulkan1); fi
  (cd "$work" && apt-get download -qq "${pkgs[@]}")
  for d in "${debs[@]}"; do
    spec=${d%% *}
    name=${spec%%=*}
    deb=$(ls "$work/${name}_"*.deb)
    check_sha "$deb" "${d##* }"
  done
  for deb in "$work"/*.deb; do dpkg-deb -x "$deb" "$work/root"; done
  install -m 0755 "$work/root/usr/lib/x86_64-linux-gnu/libvulkan_lvp.so" "$dest/lib/"
  check_sha "$dest/lib/libvulkan_lvp.so" "$lvp_so_sha"
  if ls "$work"/root/usr/lib/x86_64-linux-gnu/libvulkan.so.1* >/dev/null 2>&1; then
    cp -P "$work"/root/usr/lib/x86_64-linux-gnu/libvulkan.so.1* "$dest/lib/"
  fi
fi

# ---- SwiftShader (a second CPU Vulkan driver, for the second WebGPU tier) ----
# Chromium's libvk_swiftshader.so from Debian's chromium-common in the release's main suite,
# pinned; it needs only libc. The archive drops an old version at a point release: then
# this says so and the SwiftShader tier reports itself skipped.
ss_deb="chromium-common=150.0.7871.100-1~deb12u1 31326f6b71ce20a52e7bea9792bf7135d4ff802e1cdbc250960b1b46729998d2"
ss_so_sha=fef3d284cb6c0aee7857e13fd0a9d69d7e959a24306ed8825b567545e586f6e2
if [[ -f "$dest/lib/libvk_swiftshader.so" && $(sha_of "$dest/lib/libvk_swiftshader.so") == "$ss_so_sha" ]]; then
  say "SwiftShader present"
else
  private_apt
  mkdir -p "$work/ss"
  if (cd "$work/ss" && apt-get download -qq "${ss_deb%% *}"); then
    deb=$(ls "$work"/ss/chromium-common_*.deb)
    check_sha "$deb" "${ss_deb##* }"
    dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$work/ss" ./usr/lib/chromium/libvk_swiftshader.so
    install -m 0755 "$work/ss/usr/lib/chromium/libvk_swiftshader.so" "$dest/lib/"
    check_sha "$dest/lib/libvk_swiftshader.so" "$ss_so_sha"
  else
    rm -f "$dest/lib/libvk_swiftshader.so"
    say "SwiftShader (${ss_deb%% *}) is not in the archive: its tier will be skipped"
  fi
fi

# lavapipe must find every library it links at run time.
missing=$(ldd "$dest/lib/libvulkan_lvp.so" | grep 'not found' || true)
[[ -z "$missing" ]] || die "libvulkan_lvp.so misses libraries:"$'\n'"$missing"

cat > "$dest/icd.d/lvp_icd.json" <<EOF
{
    "file_format_version": "1.0.1",
    "ICD": {
        "library_path": "$dest/lib/libvulkan_lvp.so",
        "api_version": "1.4.305"
    }
}
EOF
cat > "$dest/env.sh" <<EOF
# Source this to run numr's WebGPU backend on lavapipe.
export NUMR_WEBGPU_LIB="$dest/lib/libwebgpu_wrapper.so"
export VK_ICD_FILENAMES="$dest/icd.d/lvp_icd.json"
EOF
rm -f "$dest/env-swiftshader.sh"
if [[ -f "$dest/lib/libvk_swiftshader.so" ]]; then
  cat > "$dest/icd.d/swiftshader_icd.json" <<EOF
{
    "file_format_version": "1.0.0",
    "ICD": {
        "library_path": "$dest/lib/libvk_swiftshader.so",
        "api_version": "1.0.5"
    }
}
EOF
  cat > "$dest/env-swiftshader.sh" <<EOF
# Source this to run numr's WebGPU backend on SwiftShader.
export NUMR_WEBGPU_LIB="$dest/lib/libwebgpu_wrapper.so"
export VK_ICD_FILENAMES="$dest/icd.d/swiftshader_icd.json"
EOF
  say "done: source $dest/env.sh (lavapipe) or $dest/env-swiftshader.sh (SwiftShader)"
else
  say "done: source $dest/env.sh (lavapipe)"
fi
