# Sets the routes that keep a sandbox's network to the internet (`fence.rs`), run by perl
# outside the sandbox: it enters the sandbox's user namespace (which gives it the
# capabilities to configure the network there, as long as it runs no other program) and
# then its network namespace, and hands the kernel the routing requests Cairn wrote on its
# standard input, each whole, its length in its header.
#
# Arguments: the setns system call's number; the user namespace's file descriptor; the
# network namespace's. Prints `fenced` once every request was taken; otherwise says why on
# its standard error and exits 1.

my ($setns, $user, $net) = @ARGV;
sub fail { print STDERR "$_[0]\n"; exit 1; }
syscall($setns + 0, $user + 0, 0x10000000) == 0
    or fail("cannot enter the sandbox's user namespace: $!");
syscall($setns + 0, $net + 0, 0x40000000) == 0
    or fail("cannot enter the sandbox's network namespace: $!");
# AF_NETLINK, SOCK_RAW, NETLINK_ROUTE.
socket(my $socket, 16, 3, 0) or fail("no routing socket: $!");
binmode(STDIN);
my $all = do { local $/; <STDIN> };
my $at = 0;
while ($at + 16 <= length($all)) {
    my $length = unpack('L', substr($all, $at, 4));
    fail("a request is cut short") if $length < 16 || $at + $length > length($all);
    defined(send($socket, substr($all, $at, $length), 0)) or fail("routing socket: $!");
    defined(recv($socket, my $answer, 65536, 0)) or fail("routing socket: $!");
    my ($type) = unpack('x4 S', $answer);
    # NLMSG_ERROR, with 0 for an acknowledgement.
    if ($type == 2) {
        my $error = unpack('l', substr($answer, 16, 4));
        if ($error != 0) {
            $! = -$error;
            fail("a route was refused: $!");
        }
    }
    $at += $length;
}
print "fenced\n";
