# Indexes in older on-disk formats (the metapage's version field set back to 3, as an index built
# by simhash 0.1.0 has it, and to 4, as 0.2.0 and 0.3.0 build them): ALTER EXTENSION ... UPDATE names it in a WARNING (extension
# scripts run with client_min_messages at WARNING at least), queries and
# writes that would use it fail with a hint to REINDEX, simhash_index_info reports its version,
# and REINDEX brings it back.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('format_upgrade');
$node->init;
# initdb enables data checksums from PostgreSQL 18 on: the patched metapage's checksum no longer
# matches, so the buffer manager must be told to accept it (with a WARNING).
$node->append_conf('postgresql.conf', "autovacuum = off\nignore_checksum_failure = on\n");
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION simhash VERSION '0.1.0';
CREATE TABLE docs (id int, fp bigint);
INSERT INTO docs SELECT g, hashtextextended('doc' || g, 0) FROM generate_series(1, 5000) g;
CREATE INDEX docs_fp ON docs USING simhash (fp);
CREATE INDEX docs_id ON docs (id);
});
my $file = $node->data_dir . '/' . $node->safe_psql('postgres', "SELECT pg_relation_filepath('docs_fp')");
$node->stop;

# The metapage: page header (24 bytes), then magic (4 bytes) and version (4 bytes).
open(my $fh, '+<', $file) or die "open $file: $!";
binmode $fh;
seek($fh, 24, 0);
read($fh, my $magic, 4);
is(unpack('V', $magic), 0x53484958, 'the metapage starts with the simhash magic');
seek($fh, 28, 0);
print $fh pack('V', 3);
close($fh);
$node->start;

# Indexes the update cannot read are left out of its check: another session's temporary index,
# and one that a failed CREATE INDEX CONCURRENTLY left without pages.
$node->safe_psql('postgres', 'CREATE TABLE broken (id int, fp bigint); INSERT INTO broken SELECT g, g FROM generate_series(1, 1000) g');
$node->psql('postgres', 'CREATE INDEX CONCURRENTLY broken_fp ON broken USING simhash ((fp / (id - 500)))');
is($node->safe_psql('postgres', "SELECT indisvalid, pg_relation_size(indexrelid) FROM pg_index WHERE indexrelid = 'broken_fp'::regclass"),
	'f|0', 'a failed CREATE INDEX CONCURRENTLY left an index without pages');
my ($temp_in, $temp_out) = ('', '');
my $temp_session = IPC::Run::start([ 'psql', '-X', '-At', '-d', $node->connstr('postgres') ],
	'<', \$temp_in, '>', \$temp_out, IPC::Run::timer($PostgreSQL::Test::Utils::timeout_default));
$temp_in .= "CREATE TEMP TABLE temp_docs (fp bigint); INSERT INTO temp_docs SELECT g FROM generate_series(1, 100) g;\n"
	. "CREATE INDEX temp_docs_fp ON temp_docs USING simhash (fp); SELECT 'temp index ready';\n";
$temp_session->pump until $temp_out =~ /temp index ready/;

my ($ret, $out, $err) = $node->psql('postgres', 'ALTER EXTENSION simhash UPDATE');
is($ret, 0, 'the extension updates');
$temp_in .= "\\q\n";
$temp_session->finish;
like($err, qr/WARNING:  simhash 0\.2\.0 stores indexes in a new on-disk format; REINDEX these indexes: docs_fp\n/,
	'the update names the index to rebuild');
unlike($err, qr/docs_id/, 'and only simhash indexes of the old format');
($ret, $out, $err) = $node->psql('postgres', "SELECT simhash_index_info('broken_fp')");
like($err, qr/simhash index "broken_fp" has not been built/, 'simhash_index_info says the failed index was never built');
$node->safe_psql('postgres', 'DROP TABLE broken');

is($node->safe_psql('postgres', "SELECT version, runs IS NULL FROM simhash_index_info('docs_fp')"), '3|t',
	'simhash_index_info reports the old version');
($ret, $out, $err) = $node->psql('postgres',
	"SET enable_seqscan = off; SELECT count(*) FROM docs WHERE hamming(fp, hashtextextended('doc7', 0)) <= 3",
	extra_params => ['-v', 'VERBOSITY=verbose']);
like($err, qr/55000: simhash index "docs_fp" has on-disk format version 3, this library reads version 5/,
	'a query through the index is refused (object_not_in_prerequisite_state)');
like($err, qr/HINT:  REINDEX INDEX public.docs_fp; rebuilds it in the current format/, 'with a hint to REINDEX');
($ret, $out, $err) = $node->psql('postgres', 'INSERT INTO docs VALUES (0, 42)');
like($err, qr/has on-disk format version 3/, 'so is a write');

$node->safe_psql('postgres', 'REINDEX INDEX docs_fp');
is($node->safe_psql('postgres', "SELECT version FROM simhash_index_info('docs_fp')"), '5', 'REINDEX rebuilds it');
my $q = "SELECT count(*) FROM docs WHERE hamming(fp, hashtextextended('doc7', 0)) <= 3";
is($node->safe_psql('postgres', "SET enable_seqscan = off; $q"), '1', 'and queries use it again');
is($node->safe_psql('postgres', "SELECT simhash_index_check('docs_fp')"), '', 'the rebuilt index verifies');
($ret, $out, $err) = $node->psql('postgres', 'ALTER EXTENSION simhash UPDATE');
unlike($err, qr/REINDEX these indexes/, 'nothing left to rebuild');

# An index of 0.3.0 (format version 4): the update to 0.4.0 names it, and it is refused until
# rebuilt. An index the new library built while the extension was still at 0.3.0 is not named.
$node->safe_psql('postgres', q{
DROP EXTENSION simhash CASCADE;
CREATE EXTENSION simhash VERSION '0.3.0';
CREATE TABLE docs3 (id int, fp bigint);
INSERT INTO docs3 SELECT g, hashtextextended('doc' || g, 0) FROM generate_series(1, 5000) g;
CREATE INDEX docs3_fp ON docs3 USING simhash (fp);
CREATE INDEX docs3_fp_current ON docs3 USING simhash (fp);
});
$file = $node->data_dir . '/' . $node->safe_psql('postgres', "SELECT pg_relation_filepath('docs3_fp')");
$node->stop;
open($fh, '+<', $file) or die "open $file: $!";
binmode $fh;
seek($fh, 28, 0);
print $fh pack('V', 4);
close($fh);
$node->start;
($ret, $out, $err) = $node->psql('postgres', 'ALTER EXTENSION simhash UPDATE');
is($ret, 0, 'the extension updates from 0.3.0');
like($err, qr/WARNING:  simhash 0\.4\.0 stores indexes in a new on-disk format; REINDEX these indexes: docs3_fp\n/,
	'the update names the index of format version 4');
unlike($err, qr/docs3_fp_current|0\.2\.0 stores/, 'and neither the index in the current format nor an older warning');
$node->safe_psql('postgres', 'DROP INDEX docs3_fp_current');
($ret, $out, $err) = $node->psql('postgres',
	"SET enable_seqscan = off; SELECT count(*) FROM docs3 WHERE hamming(fp, hashtextextended('doc7', 0)) <= 3",
	extra_params => ['-v', 'VERBOSITY=verbose']);
like($err, qr/55000: simhash index "docs3_fp" has on-disk format version 4, this library reads version 5/,
	'a query through the version 4 index is refused');
$node->safe_psql('postgres', 'REINDEX INDEX docs3_fp');
is($node->safe_psql('postgres', "SET enable_seqscan = off; SELECT count(*) FROM docs3 WHERE hamming(fp, hashtextextended('doc7', 0)) <= 3"),
	'1', 'REINDEX brings it back');
$node->stop;
done_testing();
