# bench/transport.sh: sourced by the benchmark scripts.  Names of the
# transports they compare, and the failstop-run options selecting each:
#   shm, tcp     failstop over UCX (shared memory; UCX_TLS=tcp)
#   ofi-PROV     failstop's OFI transport over libfabric provider PROV:
#                ofi-net, ofi-shm, ofi-sockets, ofi-rxm (tcp;ofi_rxm),
#                ofi-rxd (udp;ofi_rxd)

# fs_ofi_provider TRANSPORT: the libfabric provider name of an ofi-* transport
fs_ofi_provider() {
    case $1 in
    ofi-rxm) echo "tcp;ofi_rxm" ;;
    ofi-rxd) echo "udp;ofi_rxd" ;;
    *) echo "${1#ofi-}" ;;
    esac
}

# fs_transport_known TRANSPORT: 0 if the name is one of the above
fs_transport_known() {
    [[ $1 =~ ^(shm|tcp|ofi-(net|shm|sockets|rxm|rxd))$ ]]
}

# fs_transport_opts TRANSPORT: appends failstop-run's options for it to the
# array FS_OPTS
fs_transport_opts() {
    case $1 in
    tcp) FS_OPTS+=(-x UCX_TLS=tcp) ;;
    ofi-*) FS_OPTS+=(--mca pml_failstop_transport ofi
                     --mca pml_failstop_ofi_provider "$(fs_ofi_provider "$1")") ;;
    esac
}
