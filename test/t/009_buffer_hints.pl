# Buffer hints filled from the shared buffer headers: a backend that has missed enough hints
# reads every buffer header once and hints the index's pages it finds there. Checked twice, with
# shared buffers far smaller than the index (pages evicted under the scans, so most hints go
# stale) and with room for it: the fill runs (its DEBUG2 line), and every query through the index
# returns what a sequential scan returns, at radius 3 and 7 and nearest-first.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('hints');
$node->init;
$node->append_conf('postgresql.conf', "autovacuum = off\nshared_buffers = 1MB\n");
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION simhash;
CREATE TABLE docs (id int, fp bigint);
INSERT INTO docs SELECT g, hashint8extended(g, 5) FROM generate_series(1, 300000) g;
CREATE INDEX docs_fp ON docs USING simhash (fp);
ANALYZE docs;
-- Per query around center i (stored fingerprints with bits flipped, and random points): the rows
-- within 3 and 7 bits and the distances of the 10 nearest, as one text a query.
CREATE FUNCTION answers(n int) RETURNS text LANGUAGE plpgsql AS $$
DECLARE q bigint; out text := ''; c3 bigint; c7 bigint; near int[];
BEGIN
    FOR i IN 1 .. n LOOP
        q := CASE WHEN i % 2 = 0 THEN hashint8extended(i * 37, 5) # (1::bigint << (i % 64))
                  ELSE hashint8extended(i, 77) END;
        SELECT count(*) INTO c3 FROM docs WHERE hamming(fp, q) <= 3;
        SELECT count(*) INTO c7 FROM docs WHERE hamming(fp, q) <= 7;
        SELECT array_agg(d ORDER BY d) INTO near
        FROM (SELECT hamming(fp, q) AS d FROM docs ORDER BY fp <~> q LIMIT 10) s;
        out := out || format('%s:%s:%s:%s ', i, c3, c7, near);
    END LOOP;
    RETURN md5(out);
END $$;
});
my $pages = $node->safe_psql('postgres', "SELECT pg_relation_size('docs_fp') / 8192");
ok($pages > 1000, "the index ($pages pages) is larger than 1MB of shared buffers");

my $truth = $node->safe_psql('postgres', q{
SET enable_indexscan = off; SET enable_bitmapscan = off;
SELECT answers(100)});

# The plans the index answers with: a scan of docs_fp for each query form.
like($node->safe_psql('postgres', q{
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM docs WHERE hamming(fp, 1) <= 3}), qr/docs_fp/, 'radius queries use the index');
like($node->safe_psql('postgres', q{
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM docs ORDER BY fp <~> 1 LIMIT 10}), qr/Index Scan using docs_fp/,
	'nearest-first queries use the index');

sub indexed_answers {
	my ($what) = @_;
	my ($out, $err) = ('', '');
	$node->psql('postgres', q{
SET enable_seqscan = off; SET client_min_messages = debug2;
SELECT answers(100)}, stdout => \$out, stderr => \$err);
	is($out, $truth, "$what: every answer through the index is the sequential scan's");
	like($err, qr/simhash: hinted \d+ pages of index "docs_fp" found in \d+ shared buffers/,
		"$what: the backend filled its hints from the buffer headers");
	return $err;
}

indexed_answers('1MB of shared buffers');

$node->append_conf('postgresql.conf', "shared_buffers = 64MB\n");
$node->restart;
indexed_answers('64MB of shared buffers, the index read in');
# A new backend, the index's pages in shared buffers from the one before: its fill hints them.
my $err = indexed_answers('64MB of shared buffers, a new backend');
my ($most) = sort { $b <=> $a } ($err =~ /hinted (\d+) pages of index "docs_fp"/g);
ok($most > $pages / 2, "with the index in shared buffers a fill hints most of its pages ($most of $pages)");

$node->stop;
done_testing();
