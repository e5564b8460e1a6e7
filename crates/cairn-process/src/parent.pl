# The command's parent inside the sandbox, run by perl as its pid 1 (in place of
# bubblewrap's own). It starts the command as bubblewrap would (pid 2, a session of its own,
# the same environment and file descriptors), reaps what is orphaned meanwhile, and tells
# Cairn how the command ended: its wait status, which bubblewrap can only give as an exit
# code (128 + the signal). It exits with the code bubblewrap would have.
#
# Arguments: the status channel's file descriptor; the gate's (or `-`); the numbers of the
# setsid and keyctl system calls (-1: none); how many NAME=VALUE words follow (the PERL*
# variables Cairn kept from perl, given back to the command); the program and its arguments.
#
# The command gets a session keyring of its own (keyctl's JOIN_SESSION_KEYRING with no
# name), so the keys of the user's login session are out of its reach; where that fails
# it is not started.
#
# On the gate it writes `up` once it runs, then waits for a line: `go`, or a note for the
# command's stderr. On the status channel it writes `status N` when the command has ended.

my ($fd, $gate_fd, $setsid, $keyctl, $count) = splice(@ARGV, 0, 5);
my @kept = splice(@ARGV, 0, $count);
my ($channel, $gate);
undef $channel unless open($channel, '+<&=', $fd);
undef $gate unless $gate_fd ne '-' && open($gate, '+<&=', $gate_fd);
binmode($channel) if $channel;
if ($gate) {
    binmode($gate);
    syswrite($gate, "up\n");
    my $said = <$gate>;
    print STDERR $said if defined $said && $said ne "go\n";
}

my $kid = fork;
if (!defined $kid) {
    print STDERR "cairn: cannot start the command: $!\n";
    exit 1;
}
if ($kid == 0) {
    close($channel) if $channel;
    close($gate) if $gate;
    delete @ENV{grep { /^PERL/ } keys %ENV};
    for (@kept) {
        my ($name, $value) = split(/=/, $_, 2);
        $ENV{$name} = $value;
    }
    syscall($setsid + 0);
    if ($keyctl >= 0 && syscall($keyctl + 0, 1, 0) < 0) {
        print STDERR "cairn: cannot give the command a keyring of its own: $!\n";
        exit 1;
    }
    exec { $ARGV[0] } @ARGV;
    print STDERR "bwrap: execvp $ARGV[0]: $!\n";
    exit 1;
}

my $status = 0;
while ((my $done = wait) != -1) {
    if ($done == $kid) {
        $status = $?;
        last;
    }
}
syswrite($channel, "status $status\n") if $channel;
exit(($status & 127) ? 128 + ($status & 127) : $status >> 8);
