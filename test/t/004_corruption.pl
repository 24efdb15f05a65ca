# simhash_index_check reports damaged pages and entries with ERRCODE_INDEX_CORRUPTED (XX002), and
# scans refuse pages that are not simhash pages.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('corrupt');
$node->init;
# initdb enables data checksums from PostgreSQL 18 on: the buffer manager would then refuse the
# damaged pages below (XX001) before the index could look at them.
$node->append_conf('postgresql.conf', 'ignore_checksum_failure = on');
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION simhash;
CREATE TABLE docs (id int, fp bigint);
INSERT INTO docs SELECT g, hashtextextended('doc' || g, 0) FROM generate_series(1, 5000) g;
CREATE INDEX docs_fp ON docs USING simhash (fp);
});
is($node->safe_psql('postgres', "SELECT simhash_index_check('docs_fp')"), '', 'intact index verifies');
# Overwrite bytes at `offset` of block `block` of the index (server stopped; REINDEX moves the file).
sub damage {
	my ($block, $offset, $bytes) = @_;
	my $file = $node->data_dir . '/' . $node->safe_psql('postgres', "SELECT pg_relation_filepath('docs_fp')");
	$node->stop;
	open(my $fh, '+<', $file) or die "open $file: $!";
	binmode $fh;
	sysseek($fh, $block * 8192 + $offset, 0) or die;
	syswrite($fh, $bytes) or die;
	close $fh;
	$node->start;
}

sub check_fails {
	my ($label, $pattern) = @_;
	my ($ret, $out, $err) = $node->psql('postgres',
		"\\set VERBOSITY verbose\nSELECT simhash_index_check('docs_fp');");
	isnt($ret, 0, "$label: verification fails");
	like($err, qr/XX002/, "$label: with ERRCODE_INDEX_CORRUPTED");
	like($err, $pattern, "$label: names the problem");
}

# Block 1 is the first page of table 0: flip a bit in the first entry's fingerprint.
damage(1, 24, "\xA5");
check_fails('changed fingerprint', qr/does not match table 0|out of order|missing from/);
$node->safe_psql('postgres', 'REINDEX INDEX docs_fp');
is($node->safe_psql('postgres', "SELECT simhash_index_check('docs_fp')"), '', 'REINDEX repairs it');

# A ref keeps, above its table-0 position, the bits of its entry's rotation that follow its key:
# flip the top one of the first ref of the first ref page (flags 0x20 at byte 8182; the first
# ref's position word at bytes 28-31).
$node->safe_psql('postgres', 'CHECKPOINT');
my $index_file = $node->data_dir . '/' . $node->safe_psql('postgres', "SELECT pg_relation_filepath('docs_fp')");
open(my $index_fh, '<', $index_file) or die "open $index_file: $!";
binmode $index_fh;
my ($ref_block, $ref_top);
for (my $block = 0; !defined $ref_block && sysread($index_fh, my $page, 8192) == 8192; ++$block) {
	($ref_block, $ref_top) = ($block, ord(substr($page, 31, 1))) if unpack('v', substr($page, 8182, 2)) == 0x20;
}
close $index_fh;
die 'no ref page found' unless defined $ref_block;
damage($ref_block, 31, chr($ref_top ^ 0x80));
check_fails('changed ref tail', qr/table \d block $ref_block entry 0 does not match table 0/);
$node->safe_psql('postgres', 'REINDEX INDEX docs_fp');

# The page ID in the special space of block 2.
damage(2, 8190, "\x00\x00");
check_fails('bad page id', qr/unexpected page/);
my ($ret, $out, $err) = $node->psql('postgres',
	"SET enable_seqscan = off; SELECT count(*) FROM docs WHERE hamming(fp, 0) <= 64;");
like($err, qr/unexpected page/, 'a scan reading the damaged page refuses it');
$node->safe_psql('postgres', 'REINDEX INDEX docs_fp');

# The special space's size in block 2's header (8168: still a valid header for PostgreSQL's own
# check when the page is read).
damage(2, 16, "\xE8\x1F");
check_fails('bad special size', qr/block 2 has a special space of 24 bytes/);
$node->safe_psql('postgres', 'REINDEX INDEX docs_fp');

# The metapage magic.
damage(0, 24, "XXXX");
check_fails('bad magic', qr/not a simhash index/);
$node->safe_psql('postgres', 'REINDEX INDEX docs_fp');
is($node->safe_psql('postgres', "SELECT simhash_index_check('docs_fp')"), '', 'verifies after the last REINDEX');
$node->stop;
done_testing();
