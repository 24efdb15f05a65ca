# A database with simhash_dedup triggers (a generated fingerprint verified by its text, a
# partitioned table, the extension in a schema of its own) survives pg_dump and pg_restore: the
# extension's event trigger, which checks every CREATE TRIGGER, is not dumped (CREATE EXTENSION
# makes it) and passes the triggers the restore creates under pg_dump's empty search_path; the
# restored triggers deduplicate as before. A trigger that the event trigger refuses stops a restore
# with --exit-on-error, naming it.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('dedup_dump');
$node->init;
$node->start;
$node->safe_psql('postgres', 'CREATE DATABASE source');
$node->safe_psql('source', q{
CREATE SCHEMA ext;
CREATE EXTENSION simhash SCHEMA ext;
CREATE TABLE pages (id bigserial PRIMARY KEY, body text, fp bigint GENERATED ALWAYS AS (ext.minhash64(body)) STORED,
                    dup_of bigint);
CREATE INDEX ON pages USING simhash (fp);
CREATE TRIGGER pages_dedup BEFORE INSERT OR UPDATE ON pages
    FOR EACH ROW EXECUTE FUNCTION ext.simhash_dedup('fp', '10', 'mark', 'dup_of', 'id', 'verify=body');
CREATE TABLE parted (id int, lang text, fp bigint) PARTITION BY LIST (lang);
CREATE TABLE parted_en PARTITION OF parted FOR VALUES IN ('en');
CREATE INDEX ON parted USING simhash (fp);
CREATE TRIGGER parted_dedup BEFORE INSERT ON parted FOR EACH ROW EXECUTE FUNCTION ext.simhash_dedup('fp', '3', 'skip', 'nulls=keep');
INSERT INTO pages (body) VALUES ('one two three four five six seven'), ('one two three four five six seven eight');
INSERT INTO parted VALUES (1, 'en', 0), (2, 'en', 7), (3, 'en', NULL);
});
my $tempdir = PostgreSQL::Test::Utils::tempdir();
my $dump = "$tempdir/source.dump";
$node->command_ok([ 'pg_dump', '-Fc', '-f', $dump, '-d', $node->connstr('source') ], 'pg_dump');
my ($stdout, $stderr) = run_command([ 'pg_restore', '-l', $dump ]);
unlike($stdout, qr/EVENT TRIGGER/, 'the extension\'s event trigger is not dumped');

$node->safe_psql('postgres', 'CREATE DATABASE restored');
$node->command_ok([ 'pg_restore', '--exit-on-error', '-d', $node->connstr('restored'), $dump ], 'pg_restore');
is($node->safe_psql('restored', 'SELECT count(*) FROM pg_event_trigger'), '1', 'one event trigger, the extension\'s');
is($node->safe_psql('restored', q{
INSERT INTO pages (body) VALUES ('one two three four five six seven'), ('nothing like the others');
SELECT string_agg(id || ':' || coalesce(dup_of::text, '-'), ',' ORDER BY id) FROM pages;
}), '1:-,2:1,3:1,4:-', 'the restored trigger marks verified near-duplicates of its generated fingerprint');
is($node->safe_psql('restored', q{
INSERT INTO parted VALUES (4, 'en', 1), (5, 'en', 255);
SELECT string_agg(id::text, ',' ORDER BY id) FROM parted;
}), '1,3,5', 'the restored partitioned table deduplicates');

# A trigger created while the event trigger was disabled, with a bad argument, is refused by the
# restore's CREATE TRIGGER.
$node->safe_psql('source', q{
ALTER EVENT TRIGGER simhash_dedup_check_arguments DISABLE;
CREATE TRIGGER bad BEFORE INSERT ON pages FOR EACH ROW EXECUTE FUNCTION ext.simhash_dedup('fp', '10', 'skip', 'verify=nope');
ALTER EVENT TRIGGER simhash_dedup_check_arguments ENABLE;
});
$node->command_ok([ 'pg_dump', '-Fc', '-f', $dump, '-d', $node->connstr('source') ], 'pg_dump with a bad trigger');
$node->safe_psql('postgres', 'CREATE DATABASE restored_bad');
$node->command_fails_like([ 'pg_restore', '--exit-on-error', '-d', $node->connstr('restored_bad'), $dump ],
	qr/verify column "nope" does not exist in table "pages".*Command was: CREATE TRIGGER bad /s,
	'a trigger with a bad argument stops the restore, named');

done_testing();
