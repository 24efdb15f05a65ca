// Deduplication on load: the trigger function simhash_dedup() and the lock helper
// simhash_lock_neighbourhood().
//
// A BEFORE INSERT OR UPDATE ... FOR EACH ROW trigger, per row:
//  1. locks the fingerprint's neighbourhood: the 64 bits are cut into m = radius + 1 blocks; two
//     fingerprints within `radius` bits agree exactly on at least one block (pigeonhole), so the
//     advisory locks (database, table oid, fold(block number, block value), 0x5348) of two
//     near-duplicates always share at least one key. The keys are folded into kLockKeys values
//     per table, de-duplicated and taken in ascending order (transaction-scoped, ExclusiveLock);
//  2. with the locks held, asks whether a row lies within the radius. Where the fingerprint column
//     has a plain simhash index (the usual case) the trigger scans that index itself, as the
//     executor would (index scan, heap fetch under a new snapshot), without SPI or a plan: most
//     rows have no near-duplicate and need no more. Otherwise, and to report or point at the
//     nearest match once one exists, it runs the check query (a saved SPI plan per trigger, run as
//     the table owner) `SELECT ... FROM ONLY t WHERE hamming(fp, $1) <= radius AND ctid <> $2
//     [ORDER BY ...] LIMIT 1` (no ORDER BY for 'skip'), which the simhash index serves. The check runs as
//     the table owner inside a security-restricted operation, and every function, operator and
//     type in its text is schema-qualified (this extension's schema, pg_catalog), so nothing a
//     loader puts on its search_path can run as the owner or change the answer. SPI takes a new
//     snapshot after a command counter increment: in READ COMMITTED it sees every near-duplicate
//     committed by a loader that held a shared key before us, and the rows inserted earlier by
//     the same statement;
//  3. skip (return NULL), error (23505) or mark (set a column to the matched row's key).
// With the option verify=<text column>, step 2 reads every row within the radius (nearest first for
// 'error' and 'mark') until one whose text's exact shingle similarity with the new row's reaches the
// threshold; rows within the radius that do not verify are not acted on. The locks are the same.
// A NULL fingerprint (or NULL text to verify) is refused with 23502 unless nulls=keep keeps the row.
// A stored generated fingerprint or text column is computed by the trigger from the new row, as
// PostgreSQL computes it only after BEFORE triggers. The extension's event trigger runs the same
// argument checks at CREATE TRIGGER (simhash_dedup_check_arguments).
// In REPEATABLE READ / SERIALIZABLE the transaction snapshot may predate a concurrent loader's
// commit: when the check finds nothing, it runs once more with the latest snapshot and raises a
// serialization failure (40001) if that one finds a near-duplicate (as ON CONFLICT does).
//
// Plain C-style code: no C++ object with a destructor is alive while PostgreSQL may raise.
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "core/hamming.h"
#include "core/near_pairs.h"
#include "am/simhash_am.h"
#include "hamming_ball.h"
#include "sql_arguments.h"  // includes guard.h

extern "C" {
#include "access/genam.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/partition.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_trigger.h"
#include "catalog/pg_type.h"
#include "commands/event_trigger.h"
#include "commands/extension.h"
#include "commands/trigger.h"
#include "executor/executor.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "optimizer/optimizer.h"
#include "parser/parse_coerce.h"
#include "parser/parse_func.h"
#include "rewrite/rewriteHandler.h"
#include "storage/lock.h"
#include "storage/proc.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/fmgroids.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/partcache.h"
#include "utils/acl.h"
#include "utils/rel.h"
#include "utils/resowner.h"
#include "utils/rls.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
}

namespace {

// Distinct lock keys per table. Every session must use the same value (it is part of the lock
// protocol), so it is a constant, not a setting.
constexpr uint32 kLockKeys = 1024;
static_assert(kLockKeys % 64 == 0, "held keys are recorded 64 to a word");
// locktag_field4 of our advisory locks (pg_locks.objsubid), apart from pg_advisory_lock's 1 and 2.
constexpr uint16 kLockSpace = 0x5348;  // "SH"

int neighbourhood_keys(int64 fp, int radius, uint32 *keys) {
    return simhash::neighbourhood_lock_keys(static_cast<uint64_t>(fp), radius, kLockKeys, keys);
}

// The keys of one table this (sub)transaction has locked: a load asks the lock manager for each
// key once, not for every row (at radius 3, four lookups in its local lock table a row, ~0.2 us).
// A subtransaction that aborts releases the locks it took, so the record holds for one
// (transaction, subtransaction) and starts over when either changes, or the table does; the
// transaction's end clears it (see held_keys_at_end), so a local transaction ID that comes round
// again cannot revive it.
struct HeldKeys {
    LocalTransactionId lxid;
    SubTransactionId subxid;
    Oid relid;
    uint64 bits[kLockKeys / 64];
};
HeldKeys held_keys = {InvalidLocalTransactionId, InvalidSubTransactionId, InvalidOid, {}};

void held_keys_at_end(XactEvent, void *) { held_keys.lxid = InvalidLocalTransactionId; }

// Whether the record says this (sub)transaction holds `key` of `relid`; a record of another
// (sub)transaction or table is emptied first, so that acquire_key can add to it.
bool key_recorded(Oid relid, uint32 key) {
    static bool callback_registered = false;
    if (!callback_registered) {
        RegisterXactCallback(held_keys_at_end, nullptr);
        callback_registered = true;
    }
    const SubTransactionId subxid = GetCurrentSubTransactionId();
    if (held_keys.lxid != SIMHASH_MY_LXID || held_keys.subxid != subxid || held_keys.relid != relid) {
        held_keys.lxid = SIMHASH_MY_LXID;
        held_keys.subxid = subxid;
        held_keys.relid = relid;
        memset(held_keys.bits, 0, sizeof(held_keys.bits));
    }
    return (held_keys.bits[key / 64] & (uint64{1} << (key % 64))) != 0;
}

// Asks the lock manager for `key`, waiting for it or (dont_wait) not: false when it is held
// elsewhere. The lock is owned by the (sub)transaction, not by whatever resource owner is current:
// a trigger or call running inside a cursor's FETCH would give the lock to the cursor's portal,
// and a later FETCH that fails releases the portal's locks while the rows they guard stay inserted
// (and the record would still say they are held).
bool acquire_key(Oid relid, uint32 key, bool dont_wait) {
    LOCKTAG tag;
    SET_LOCKTAG_ADVISORY(tag, MyDatabaseId, relid, key, kLockSpace);
    ResourceOwner caller_owner = CurrentResourceOwner;
    CurrentResourceOwner = CurTransactionResourceOwner;
    const LockAcquireResult result = LockAcquire(&tag, ExclusiveLock, false, dont_wait);
    CurrentResourceOwner = caller_owner;
    if (result == LOCKACQUIRE_NOT_AVAIL) return false;
    held_keys.bits[key / 64] |= uint64{1} << (key % 64);  // only once the lock is held: a cancelled wait leaves no bit
    return true;
}

void lock_key(Oid relid, uint32 key) {
    if (!key_recorded(relid, key)) (void)acquire_key(relid, key, false);
}

// Gives back a key taken by this (sub)transaction (the lock manager counts acquisitions: a key
// taken more than once stays held until the last is given back).
void unlock_key(Oid relid, uint32 key) {
    LOCKTAG tag;
    SET_LOCKTAG_ADVISORY(tag, MyDatabaseId, relid, key, kLockSpace);
    ResourceOwner caller_owner = CurrentResourceOwner;
    CurrentResourceOwner = CurTransactionResourceOwner;
    (void)LockRelease(&tag, ExclusiveLock, false);
    CurrentResourceOwner = caller_owner;
    held_keys.bits[key / 64] &= ~(uint64{1} << (key % 64));
}

void lock_neighbourhood(Oid relid, int64 fp, int radius) {
    uint32 keys[65];
    const int n = neighbourhood_keys(fp, radius, keys);
    for (int i = 0; i < n; ++i) lock_key(relid, keys[i]);
}

enum DedupAction { kSkip, kError, kMark };
enum VerifyMeasure { kJaccard, kContainment };

// What a simhash_dedup trigger's arguments say, checked against its table (check_dedup_trigger).
struct DedupArguments {
    DedupAction action;
    int radius;
    int fp_attnum;
    int mark_attnum;    // 0 unless mark
    int key_attnum;     // the key column (the check query's 3rd column), 0 when there is none
    int verify_attnum;  // the text column that verifies a candidate, 0 without verification
    double threshold;   // the least similarity of a verified near-duplicate
    VerifyMeasure measure;
    simhash::ShingleOptions shingles;
    bool keep_nulls;    // rows without a fingerprint (or text to verify) are kept unchecked, not refused
};

// The generation expressions of the fingerprint and verified text columns where they are stored
// generated columns (nullptr for the others): PostgreSQL computes those only after BEFORE
// triggers, so the trigger computes them itself (see new_row_value), with a slot and an expression
// context of their own, all in `context`.
struct GeneratedColumns {
    MemoryContext context;  // nullptr when neither column is generated
    ExprState *fp;
    ExprState *text;
    ExprContext *econtext;
    TupleTableSlot *slot;
};

// One saved check plan per trigger (pg_trigger oid). Rebuilt when the table's relcache entry is
// invalidated (rename, ALTER) and the query text changed.
struct DedupEntry {
    Oid tgoid;  // hash key
    bool stale;
    Oid relid;
    DedupArguments args;
    int text_field;   // the check query's column holding the verified text, 0 without verification
    char *query;      // in TopMemoryContext
    SPIPlanPtr plan;  // saved
    Oid index;        // a simhash index the trigger scans itself (see direct_check), or InvalidOid
    // The transaction in which the table's TRIGGER grantees were last checked (check_trigger_creators),
    // and the transaction and user for whom 'mark' was last allowed (check_mark_reader).
    LocalTransactionId creators_checked;
    LocalTransactionId mark_checked;
    Oid mark_checked_user;
    // The fingerprint and verified text columns' generation expressions (see GeneratedColumns),
    // prepared for generated_user, whose EXECUTE privileges on their functions were checked then;
    // InvalidOid when they must be prepared again (the table or a function changed). While they
    // run, generated_busy is the transaction's: a row the expressions insert into this table
    // themselves (through a function falsely declared immutable) must not reuse the state in use.
    GeneratedColumns generated;
    Oid generated_user;
    LocalTransactionId generated_busy;
};

HTAB *dedup_entries = nullptr;

void dedup_relcache_callback(Datum, Oid relid) {
    if (dedup_entries == nullptr) return;
    HASH_SEQ_STATUS status;
    hash_seq_init(&status, dedup_entries);
    DedupEntry *entry;
    while ((entry = static_cast<DedupEntry *>(hash_seq_search(&status))) != nullptr)
        if (relid == InvalidOid || entry->relid == relid) entry->stale = true;
}

// Any schema changed: every entry is rebuilt (its query names two schemas).
void dedup_namespace_callback(Datum, int, uint32) { dedup_relcache_callback((Datum)0, InvalidOid); }

// A function or type changed: generation expressions are prepared again (SQL functions in them
// were inlined, domain checks looked up when they were prepared).
void dedup_function_callback(Datum, int, uint32) {
    if (dedup_entries == nullptr) return;
    HASH_SEQ_STATUS status;
    hash_seq_init(&status, dedup_entries);
    DedupEntry *entry;
    while ((entry = static_cast<DedupEntry *>(hash_seq_search(&status))) != nullptr) entry->generated_user = InvalidOid;
}

// An integer argument between min and max, in digits only (strtol would also take leading spaces
// and a sign); `what` names it in the error.
int parse_integer_argument(const char *what, const char *text, int min, int max) {
    char *end = nullptr;
    errno = 0;
    const long value = std::strtol(text, &end, 10);
    if (!(text[0] >= '0' && text[0] <= '9') || *end != '\0' || errno != 0 || value < min || value > max)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("simhash_dedup: %s must be an integer between %d and %d, not \"%s\"", what, min, max,
                               text)));
    return static_cast<int>(value);
}

int column_attnum(Relation rel, const char *name, const char *role) {
    const int attnum = SPI_fnumber(RelationGetDescr(rel), name);
    if (attnum <= 0)
        ereport(ERROR, (errcode(ERRCODE_UNDEFINED_COLUMN),
                        errmsg("simhash_dedup: %s column \"%s\" does not exist in table \"%s\"", role, name,
                               RelationGetRelationName(rel))));
    return attnum;
}

// The mark column receives the key of the row a new row duplicates, or NULL: refuse, when the
// trigger is first used, every definition that could only fail at the first duplicate.
void check_mark_column(Relation rel, const char *mark_column, int mark_attnum, int fp_attnum, const char *key_column,
                       int key_attnum) {
    TupleDesc desc = RelationGetDescr(rel);
    Form_pg_attribute mark = TupleDescAttr(desc, mark_attnum - 1);
    Form_pg_attribute key = TupleDescAttr(desc, key_attnum - 1);
    if (mark_attnum == fp_attnum)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("simhash_dedup: the mark column must not be the fingerprint column")));
    if (mark_attnum == key_attnum)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("simhash_dedup: the mark column \"%s\" must not be the key column", mark_column),
                        errhint("Add a column for the mark, e.g. ALTER TABLE %s ADD COLUMN duplicate_of %s.",
                                quote_identifier(RelationGetRelationName(rel)), format_type_be(key->atttypid))));
    if (mark->attgenerated != '\0')
        ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                        errmsg("simhash_dedup: mark column \"%s\" is a generated column", mark_column),
                        errdetail("A generated column cannot be set by a trigger.")));
    if (mark->attnotnull)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("simhash_dedup: mark column \"%s\" is NOT NULL", mark_column),
                        errdetail("The trigger sets the mark column to NULL on rows that duplicate nothing."),
                        errhint("ALTER TABLE %s ALTER COLUMN %s DROP NOT NULL.",
                                quote_identifier(RelationGetRelationName(rel)), quote_identifier(mark_column))));
    // The check query casts the key to the mark column's type and type modifier, and a cast
    // truncates (varchar(3)) or rounds (numeric(5,0)) where an assignment would fail: the mark
    // could name another row. So a mark column with a modifier must be the key column's type.
    if (mark->atttypmod >= 0 && (mark->atttypid != key->atttypid || mark->atttypmod != key->atttypmod))
        ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
                        errmsg("simhash_dedup: mark column \"%s\" of type %s could hold a shortened or rounded copy "
                               "of key column \"%s\" of type %s",
                               mark_column, format_type_with_typemod(mark->atttypid, mark->atttypmod), key_column,
                               format_type_with_typemod(key->atttypid, key->atttypmod)),
                        errhint("Give the mark column the key column's type: ALTER TABLE %s ALTER COLUMN %s TYPE %s.",
                                quote_identifier(RelationGetRelationName(rel)), quote_identifier(mark_column),
                                format_type_with_typemod(key->atttypid, key->atttypmod))));
    if (!can_coerce_type(1, &key->atttypid, &mark->atttypid, COERCION_ASSIGNMENT))
        ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
                        errmsg("simhash_dedup: key column \"%s\" of type %s cannot be stored in mark column \"%s\" of type %s",
                               key_column, format_type_be(key->atttypid), mark_column,
                               format_type_be(mark->atttypid)),
                        errhint("Give the mark column the key column's type.")));
}

// Whether the current user may see the stored values of these columns of `rel` in an error
// message: the rule PostgreSQL applies to the key of a unique violation (SELECT on the table or
// on each column, and no row security in force).
bool may_see_columns(Relation rel, const int *attnums, int n) {
    const Oid relid = RelationGetRelid(rel);
    const Oid user = GetUserId();
    if (check_enable_rls(relid, InvalidOid, true) == RLS_ENABLED) return false;
    if (pg_class_aclcheck(relid, user, ACL_SELECT) == ACLCHECK_OK) return true;
    for (int i = 0; i < n; ++i)
        if (attnums[i] > 0 && pg_attribute_aclcheck(relid, static_cast<AttrNumber>(attnums[i]), user, ACL_SELECT) != ACLCHECK_OK)
            return false;
    return true;
}

// Reads the trigger's arguments and (re)builds the check query of `entry`.
// Up to this radius the trigger scans a simhash index itself: its scan collects every match before
// it returns the first, and within 16 bits a table holds few (uniform fingerprints: 35 in a million).
constexpr int kDirectCheckMaxRadius = 16;

// The simhash index the trigger may scan itself for a check at `radius` on column `fp_attnum`: a
// valid index of this access method on that plain column with no predicate, on a table whose owner
// may read it (the check query runs as the owner and would need SELECT). InvalidOid if none (the
// check query is planned instead). Indexes, their validity and the table's ACL change only with a
// relcache invalidation of the table, which makes the caller choose again.
Oid direct_check_index(Relation rel, int fp_attnum, int radius) {
    if (radius > kDirectCheckMaxRadius) return InvalidOid;
    if (pg_class_aclcheck(RelationGetRelid(rel), rel->rd_rel->relowner, ACL_SELECT) != ACLCHECK_OK) return InvalidOid;
    List *indexes = RelationGetIndexList(rel);
    Oid chosen = InvalidOid;
    ListCell *cell;
    foreach (cell, indexes) {
        Relation index = index_open(lfirst_oid(cell), AccessShareLock);
        const Form_pg_index form = index->rd_index;
        const bool usable = index->rd_indam->amgettuple == simhash_amgettuple && form->indnatts == 1 &&
                            form->indkey.values[0] == fp_attnum && form->indisvalid && form->indisready &&
                            form->indislive && heap_attisnull(index->rd_indextuple, Anum_pg_index_indpred, nullptr);
        index_close(index, AccessShareLock);
        if (usable) {
            chosen = lfirst_oid(cell);
            break;
        }
    }
    list_free(indexes);
    return chosen;
}

// Where a trigger may fire: BEFORE INSERT or UPDATE, FOR EACH ROW (a row must be checked before it
// is stored, and the trigger returns the row to store).
void check_trigger_timing(int16 tgtype) {
    const char *declared = nullptr;
    if (!TRIGGER_FOR_ROW(tgtype))
        declared = "FOR EACH STATEMENT";
    else if (TRIGGER_FOR_INSTEAD(tgtype))
        declared = "INSTEAD OF";
    else if (!TRIGGER_FOR_BEFORE(tgtype))
        declared = "AFTER";
    else if (TRIGGER_FOR_DELETE(tgtype))
        declared = "ON DELETE";
    if (declared != nullptr)
        ereport(ERROR, (errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
                        errmsg("simhash_dedup: must be fired BEFORE INSERT or UPDATE, FOR EACH ROW"),
                        errdetail("The trigger is declared %s.", declared)));
}

// A generated column whose values are not stored (PostgreSQL 18's virtual columns): no index can
// hold them and a stored row has none to read.
void refuse_virtual_column(Relation rel, int attnum, const char *role) {
    const Form_pg_attribute att = TupleDescAttr(RelationGetDescr(rel), attnum - 1);
    if (att->attgenerated == '\0' || att->attgenerated == ATTRIBUTE_GENERATED_STORED) return;
    ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                    errmsg("simhash_dedup: %s column \"%s\" is a virtual generated column", role, NameStr(att->attname)),
                    errdetail("Its values are not stored, so the check could not read them from stored rows."),
                    errhint("Declare it GENERATED ALWAYS AS (...) STORED.")));
}

// Which of the two words an option takes `value` is: false for the first, true for the second.
bool option_choice(const char *option, const char *value, const char *first, const char *second) {
    if (std::strcmp(value, first) == 0) return false;
    if (std::strcmp(value, second) != 0)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("simhash_dedup: %s must be '%s' or '%s', not \"%s\"", option, first, second, value)));
    return true;
}

constexpr const char *kOptionsHint =
    "Options follow the other arguments as name=value: verify=<text column>, threshold=<number in (0, 1]>, "
    "measure=jaccard|containment, unit=word|char, size=<1..64>, nulls=error|keep.";

// The options after the positional arguments (name=value), into *out (which holds the defaults).
void check_dedup_options(Relation rel, char **options, int n, DedupArguments *out) {
    static const char *const kNames[] = {"verify", "threshold", "measure", "unit", "size", "nulls"};
    constexpr int kVerify = 0, kThreshold = 1, kMeasure = 2, kUnit = 3, kSize = 4, kNulls = 5;
    bool given[6] = {};
    for (int i = 0; i < n; ++i) {
        const char *equals = std::strchr(options[i], '=');
        if (equals == nullptr)
            ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                            errmsg("simhash_dedup: argument \"%s\" follows an option, but is none", options[i]),
                            errhint("%s", kOptionsHint)));
        const char *name = pnstrdup(options[i], equals - options[i]);
        const char *value = equals + 1;
        int option = -1;
        for (int k = 0; k < 6; ++k)
            if (std::strcmp(name, kNames[k]) == 0) option = k;
        if (option < 0)
            ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                            errmsg("simhash_dedup: unknown option \"%s\" in argument \"%s\"", name, options[i]),
                            errhint("%s", kOptionsHint)));
        if (given[option])
            ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                            errmsg("simhash_dedup: option \"%s\" is given twice", name)));
        given[option] = true;
        switch (option) {
            case kVerify: {
                const int attnum = column_attnum(rel, value, "verify");
                const Form_pg_attribute att = TupleDescAttr(RelationGetDescr(rel), attnum - 1);
                const Oid base = getBaseType(att->atttypid);
                if (base != TEXTOID && base != VARCHAROID && base != BPCHAROID)
                    ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
                                    errmsg("simhash_dedup: verify column \"%s\" must be of type text, not %s", value,
                                           format_type_be(att->atttypid))));
                refuse_virtual_column(rel, attnum, "verify");
                if (attnum == out->mark_attnum)
                    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                                    errmsg("simhash_dedup: the verify column must not be the mark column")));
                out->verify_attnum = attnum;
                break;
            }
            case kThreshold: {
                char *end = nullptr;
                errno = 0;
                const double threshold = std::strtod(value, &end);
                const bool plain_number = (value[0] >= '0' && value[0] <= '9') || value[0] == '.';
                if (!plain_number || *end != '\0' || errno != 0 || !(threshold > 0.0 && threshold <= 1.0))
                    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                                    errmsg("simhash_dedup: threshold must be a number greater than 0 and at most 1, "
                                           "not \"%s\"",
                                           value)));
                out->threshold = threshold;
                break;
            }
            case kMeasure:
                out->measure = option_choice("measure", value, "jaccard", "containment") ? kContainment : kJaccard;
                break;
            case kUnit:
                out->shingles.unit = option_choice("unit", value, "word", "char") ? simhash::ShingleUnit::kChar
                                                                                  : simhash::ShingleUnit::kWord;
                break;
            case kSize:
                out->shingles.size = parse_integer_argument("size", value, 1, simhash::kMaxShingleSize);
                break;
            case kNulls:
                out->keep_nulls = option_choice("nulls", value, "error", "keep");
                break;
        }
    }
    if (out->verify_attnum == 0)
        for (const int option : {kThreshold, kMeasure, kUnit, kSize})
            if (given[option])
                ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                                errmsg("simhash_dedup: option \"%s\" applies to verification, which needs the option "
                                       "verify=<text column>",
                                       kNames[option]),
                                errhint("For example: simhash_dedup('fp', '10', 'skip', 'verify=body').")));
}

// Checks a simhash_dedup trigger's declaration (tgtype) and arguments against its table, into
// *out. Both CREATE TRIGGER (through the event trigger simhash_dedup_check_arguments) and the
// trigger's first firing call it, so a trigger is refused with the same error at either.
void check_dedup_trigger(Relation rel, int16 tgtype, int nargs, char **args, DedupArguments *out) {
    check_trigger_timing(tgtype);
    // The positional arguments end at the first argument after the action that holds a '='.
    int positional = nargs;
    for (int i = 3; i < nargs; ++i)
        if (std::strchr(args[i], '=') != nullptr) {
            positional = i;
            break;
        }
    if (positional < 3)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("simhash_dedup: expected arguments (fingerprint column, radius, action [, ...]), got %d",
                               nargs),
                        errhint("For example: EXECUTE FUNCTION simhash_dedup('fp', '3', 'skip').")));
    int max_args;
    if (std::strcmp(args[2], "skip") == 0) {
        out->action = kSkip;
        max_args = 3;
    } else if (std::strcmp(args[2], "error") == 0) {
        out->action = kError;
        max_args = 4;  // optional key column named in the error detail
    } else if (std::strcmp(args[2], "mark") == 0) {
        out->action = kMark;
        max_args = 5;  // mark column, optional key column (default id)
        if (positional < 4)
            ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                            errmsg("simhash_dedup: action 'mark' needs the column to mark as 4th argument")));
    } else {
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("simhash_dedup: action must be 'skip', 'error' or 'mark', not \"%s\"", args[2])));
    }
    if (positional > max_args)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("simhash_dedup: too many arguments (%d) for action '%s'", positional, args[2]),
                        errhint("%s", kOptionsHint)));
    out->radius = parse_integer_argument("radius", args[1], 0, 64);
    out->fp_attnum = column_attnum(rel, args[0], "fingerprint");
    TupleDesc desc = RelationGetDescr(rel);
    if (getBaseType(TupleDescAttr(desc, out->fp_attnum - 1)->atttypid) != INT8OID)  // bigint or a domain over it
        ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
                        errmsg("simhash_dedup: fingerprint column \"%s\" must be of type bigint", args[0])));
    refuse_virtual_column(rel, out->fp_attnum, "fingerprint");
    out->mark_attnum = 0;
    out->key_attnum = 0;
    if (out->action == kMark) {
        out->mark_attnum = column_attnum(rel, args[3], "mark");
        const char *key_column = positional == 5 ? args[4] : "id";
        out->key_attnum = column_attnum(rel, key_column, "key");
        check_mark_column(rel, args[3], out->mark_attnum, out->fp_attnum, key_column, out->key_attnum);
    } else if (out->action == kError && positional == 4) {
        out->key_attnum = column_attnum(rel, args[3], "key");
    }
    out->verify_attnum = 0;
    out->threshold = 0.65;
    out->measure = kJaccard;
    out->shingles = simhash::ShingleOptions{simhash::ShingleUnit::kWord, 1};
    out->keep_nulls = false;
    check_dedup_options(rel, args + positional, nargs - positional, out);
}

const char *column_name(Relation rel, int attnum) {
    return NameStr(TupleDescAttr(RelationGetDescr(rel), attnum - 1)->attname);
}

// Reads the trigger's arguments and (re)builds the check query of `entry`.
void prepare_entry(DedupEntry *entry, Trigger *trigger, Relation rel, Oid trigger_function) {
    DedupArguments *args = &entry->args;
    check_dedup_trigger(rel, trigger->tgtype, trigger->tgnargs, trigger->tgargs, args);
    const DedupAction action = args->action;

    // Nothing in the text is resolved through the search_path: the table, this extension's
    // hamming() and its <= (whose planner support turns the comparison into an index search), and
    // pg_catalog's tid <> and casts are named with their schemas. The ORDER BY uses the default
    // B-tree operator classes of int4, bool and tid, which only a superuser can create.
    // The trigger function's own schema is the extension's (it is not relocatable).
    const char *ext = quote_identifier(get_namespace_name(get_func_namespace(trigger_function)));
    TupleDesc desc = RelationGetDescr(rel);
    StringInfoData query;
    initStringInfo(&query);
    const char *fp = quote_identifier(column_name(rel, args->fp_attnum));
    appendStringInfo(&query, "SELECT ctid, %s", fp);
    int fields = 2;
    if (action == kMark) {
        Form_pg_attribute mark = TupleDescAttr(desc, args->mark_attnum - 1);
        appendStringInfo(&query, ", CAST(%s AS %s)", quote_identifier(column_name(rel, args->key_attnum)),
                         format_type_extended(mark->atttypid, mark->atttypmod,
                                              FORMAT_TYPE_TYPEMOD_GIVEN | FORMAT_TYPE_FORCE_QUALIFY));
        ++fields;
    } else if (args->key_attnum != 0) {
        appendStringInfo(&query, ", CAST(%s AS pg_catalog.text)", quote_identifier(column_name(rel, args->key_attnum)));
        ++fields;
    }
    entry->text_field = 0;
    if (args->verify_attnum != 0) {
        appendStringInfo(&query, ", %s", quote_identifier(column_name(rel, args->verify_attnum)));
        entry->text_field = ++fields;
    }
    appendStringInfo(&query,
                     " FROM ONLY %s.%s WHERE %s.hamming(%s, $1) OPERATOR(%s.<=) %d"
                     " AND ctid OPERATOR(pg_catalog.<>) $2",
                     quote_identifier(get_namespace_name(RelationGetNamespace(rel))),
                     quote_identifier(RelationGetRelationName(rel)), ext, fp, ext, args->radius);
    // 'skip' needs any near-duplicate (no sort to set up per row); the others name the one they
    // report or point at, so it is the nearest, ties by ctid, preferring an original (unmarked) row.
    if (action != kSkip) {
        appendStringInfoString(&query, " ORDER BY ");
        if (action == kMark)
            appendStringInfo(&query, "%s IS NOT NULL, ", quote_identifier(column_name(rel, args->mark_attnum)));
        appendStringInfo(&query, "%s.hamming(%s, $1), ctid", ext, fp);
    }
    // With verification the rows are read in that order until one verifies.
    if (args->verify_attnum == 0) appendStringInfoString(&query, " LIMIT 1");

    entry->relid = RelationGetRelid(rel);
    entry->index = direct_check_index(rel, args->fp_attnum, args->radius);
    entry->generated_user = InvalidOid;  // the columns may have changed
    if (entry->plan != nullptr && entry->query != nullptr && std::strcmp(entry->query, query.data) == 0) {
        entry->stale = false;
        pfree(query.data);
        return;
    }
    if (entry->plan != nullptr) {
        SPI_freeplan(entry->plan);
        entry->plan = nullptr;
    }
    if (entry->query != nullptr) {
        pfree(entry->query);
        entry->query = nullptr;
    }
    Oid argtypes[2] = {INT8OID, TIDOID};
    if (SPI_connect() != SPI_OK_CONNECT) elog(ERROR, "simhash_dedup: SPI_connect failed");
    SPIPlanPtr plan = SPI_prepare(query.data, 2, argtypes);
    if (plan == nullptr)
        elog(ERROR, "simhash_dedup: SPI_prepare failed for \"%s\": %s", query.data,
             SPI_result_code_string(SPI_result));
    SPI_keepplan(plan);
    SPI_finish();
    entry->plan = plan;
    entry->query = MemoryContextStrdup(TopMemoryContext, query.data);
    entry->stale = false;
    pfree(query.data);
}

// A scan of pg_trigger (open as `catalog`) for the row of trigger tgoid: systable_getnext gives it,
// or nothing when there is none. The caller ends the scan.
SysScanDesc trigger_scan(Relation catalog, Oid tgoid) {
    ScanKeyData key;
    ScanKeyInit(&key, Anum_pg_trigger_oid, BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(tgoid));
    return systable_beginscan(catalog, TriggerOidIndexId, true, nullptr, 1, &key);
}

bool trigger_exists(Oid tgoid) {
    Relation catalog = table_open(TriggerRelationId, AccessShareLock);
    SysScanDesc scan = trigger_scan(catalog, tgoid);
    const bool found = HeapTupleIsValid(systable_getnext(scan));
    systable_endscan(scan);
    table_close(catalog, AccessShareLock);
    return found;
}

void release_generated_columns(GeneratedColumns *generated) {
    // Nothing in the context is registered elsewhere: the slot's row type is a copy (not a pinned
    // relcache one) and the expressions have no shutdown callbacks (no set-returning functions).
    if (generated->context != nullptr) MemoryContextDelete(generated->context);
    std::memset(generated, 0, sizeof(*generated));
}

// Prepares the generation expressions of the fingerprint and text columns that are stored generated
// columns, as the executor does for a statement (ExecInitStoredGenerated), in a new context under
// `parent`; as the current user, who loads and whose EXECUTE privileges ExecInitExpr checks.
void prepare_generated_columns(Relation rel, const DedupArguments *args, MemoryContext parent,
                               GeneratedColumns *generated) {
    std::memset(generated, 0, sizeof(*generated));
    const TupleDesc desc = RelationGetDescr(rel);
    const int attnums[2] = {args->fp_attnum, args->verify_attnum};
    ExprState **states[2] = {&generated->fp, &generated->text};
    for (int i = 0; i < 2; ++i) {
        if (attnums[i] == 0 || TupleDescAttr(desc, attnums[i] - 1)->attgenerated != ATTRIBUTE_GENERATED_STORED)
            continue;
        if (generated->context == nullptr)
            generated->context = AllocSetContextCreate(parent, "simhash_dedup generated columns", ALLOCSET_SMALL_SIZES);
        MemoryContext caller = MemoryContextSwitchTo(generated->context);
        Expr *expression = reinterpret_cast<Expr *>(build_column_default(rel, attnums[i]));
        if (expression == nullptr)
            elog(ERROR, "simhash_dedup: no generation expression for column %d of table \"%s\"", attnums[i],
                 RelationGetRelationName(rel));
        *states[i] = ExecInitExpr(expression_planner(expression), nullptr);
        MemoryContextSwitchTo(caller);
    }
    if (generated->context != nullptr) {
        MemoryContext caller = MemoryContextSwitchTo(generated->context);
        generated->econtext = CreateStandaloneExprContext();
        generated->slot = MakeSingleTupleTableSlot(CreateTupleDescCopyConstr(desc), &TTSOpsHeapTuple);
        MemoryContextSwitchTo(caller);
    }
}

// Every entry holds a saved plan. A trigger dropped (with its table, or to be created again under
// a new oid, as loaders that stage through temporary tables do) would keep its entry for the life
// of the session: when a trigger is seen for the first time, the entries of triggers that no
// longer exist are freed. Only stale entries can be such (dropping a trigger invalidates its
// table), and none is in use: no check runs while another trigger is looked up.
void sweep_dropped_triggers() {
    HASH_SEQ_STATUS status;
    hash_seq_init(&status, dedup_entries);
    DedupEntry *entry;
    while ((entry = static_cast<DedupEntry *>(hash_seq_search(&status))) != nullptr) {
        if (!entry->stale || trigger_exists(entry->tgoid)) continue;
        if (entry->plan != nullptr) SPI_freeplan(entry->plan);
        if (entry->query != nullptr) pfree(entry->query);
        release_generated_columns(&entry->generated);
        const Oid tgoid = entry->tgoid;
        (void)hash_search(dedup_entries, &tgoid, HASH_REMOVE, nullptr);
    }
}

DedupEntry *lookup_entry(Trigger *trigger, Relation rel, Oid trigger_function) {
    if (dedup_entries == nullptr) {
        HASHCTL ctl;
        std::memset(&ctl, 0, sizeof(ctl));
        ctl.keysize = sizeof(Oid);
        ctl.entrysize = sizeof(DedupEntry);
        dedup_entries = hash_create("simhash_dedup plans", 16, &ctl, HASH_ELEM | HASH_BLOBS);
        CacheRegisterRelcacheCallback(dedup_relcache_callback, (Datum)0);
        // The check query names the table's schema and the extension's: renaming a schema sends no
        // relcache invalidation of the table, and the saved plan would be parsed again from the
        // old names (another table of that name, or none).
        CacheRegisterSyscacheCallback(NAMESPACEOID, dedup_namespace_callback, (Datum)0);
        CacheRegisterSyscacheCallback(PROCOID, dedup_function_callback, (Datum)0);
        CacheRegisterSyscacheCallback(TYPEOID, dedup_function_callback, (Datum)0);
    }
    bool found;
    DedupEntry *entry = static_cast<DedupEntry *>(hash_search(dedup_entries, &trigger->tgoid, HASH_ENTER, &found));
    if (!found) {
        entry->stale = true;
        entry->relid = InvalidOid;
        entry->query = nullptr;
        entry->plan = nullptr;
        entry->index = InvalidOid;
        std::memset(&entry->generated, 0, sizeof(entry->generated));
        entry->generated_user = InvalidOid;
        entry->generated_busy = InvalidLocalTransactionId;
        sweep_dropped_triggers();  // keeps this entry: its trigger exists (entries do not move)
    }
    if (entry->stale || entry->relid != RelationGetRelid(rel)) {
        // Privileges and grants may have changed with the table: checked again before the next row.
        entry->creators_checked = InvalidLocalTransactionId;
        entry->mark_checked = InvalidLocalTransactionId;
        // Planned as the owner, who runs it: a loader that reaches the table through a view needs
        // no rights on the table's schema.
        Oid save_userid;
        int save_sec;
        GetUserIdAndSecContext(&save_userid, &save_sec);
        // SECURITY_NOFORCE_RLS as when it runs: SPI_prepare applies row security while it plans, and
        // a plan made under the owner's forced policies would keep them.
        SetUserIdAndSecContext(rel->rd_rel->relowner, save_sec | SECURITY_LOCAL_USERID_CHANGE |
                                                          SECURITY_RESTRICTED_OPERATION | SECURITY_NOFORCE_RLS);
        prepare_entry(entry, trigger, rel, trigger_function);
        SetUserIdAndSecContext(save_userid, save_sec);
    }
    return entry;
}

// A role other than `owner` (and not acting as it: neither a member with its privileges nor a
// superuser) that holds the TRIGGER privilege on `relid`, into *grantee (ACL_ID_PUBLIC, which is 0, for
// PUBLIC); false if there is none.
bool foreign_trigger_grantee(Oid relid, Oid owner, Oid *grantee) {
    HeapTuple class_tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
    if (!HeapTupleIsValid(class_tuple)) elog(ERROR, "cache lookup failed for relation %u", relid);
    bool isnull;
    const Datum acl_datum = SysCacheGetAttr(RELOID, class_tuple, Anum_pg_class_relacl, &isnull);
    bool found = false;
    if (!isnull) {  // no ACL: the default, every privilege to the owner only
        Acl *acl = DatumGetAclP(acl_datum);
        const AclItem *items = ACL_DAT(acl);
        for (int i = 0; i < ACL_NUM(acl) && !found; ++i)
            if ((ACLITEM_GET_PRIVS(items[i]) & ACL_TRIGGER) != 0 &&
                (items[i].ai_grantee == ACL_ID_PUBLIC || !has_privs_of_role(items[i].ai_grantee, owner))) {
                *grantee = items[i].ai_grantee;
                found = true;
            }
        if (reinterpret_cast<Pointer>(acl) != DatumGetPointer(acl_datum)) pfree(acl);
    }
    ReleaseSysCache(class_tuple);
    return found;
}

// The trigger's arguments choose what its check reads as the table owner (which column is the
// fingerprint, which key 'mark' copies into the new row, the radius), so they must come from the
// owner: a role that may create triggers on the table but cannot read it would otherwise read any
// column through a trigger of its own. Refused while another role (or PUBLIC) holds the TRIGGER
// privilege on the table, or on a partitioned table above it (whose triggers are cloned onto it).
void check_trigger_creators(Relation rel) {
    const Oid owner = rel->rd_rel->relowner;
    List *relids = rel->rd_rel->relispartition ? get_partition_ancestors(RelationGetRelid(rel)) : NIL;
    relids = lcons_oid(RelationGetRelid(rel), relids);
    Oid grantee = InvalidOid, granted_on = InvalidOid;
    ListCell *cell;
    foreach (cell, relids) {
        if (foreign_trigger_grantee(lfirst_oid(cell), owner, &grantee)) {
            granted_on = lfirst_oid(cell);
            break;
        }
    }
    list_free(relids);
    if (!OidIsValid(granted_on)) return;
    const char *table = quote_qualified_identifier(get_namespace_name(get_rel_namespace(granted_on)),
                                                   get_rel_name(granted_on));
    const char *role = grantee == ACL_ID_PUBLIC ? "PUBLIC" : quote_identifier(GetUserNameFromId(grantee, false));
    ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
                    errmsg("simhash_dedup: role %s may create triggers on table %s, whose owner runs the check", role,
                           table),
                    errdetail("The trigger's check runs as the owner of table %s with the trigger's arguments; a "
                              "role with the TRIGGER privilege could create such a trigger to read columns it may "
                              "not read.",
                              RelationGetRelationName(rel)),
                    errhint("REVOKE TRIGGER ON %s FROM %s;", table, role)));
}

// 'mark' copies the matched row's key into the new row, where the loader can read it (RETURNING,
// a later trigger, a constraint's error detail): so the loader must be allowed to see that column
// of every row, by PostgreSQL's rule for the key of a unique violation (may_see_columns).
void check_mark_reader(Relation rel, const DedupEntry *entry) {
    const int shown[1] = {entry->args.key_attnum};
    if (may_see_columns(rel, shown, 1)) return;
    const char *table = quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)),
                                                   RelationGetRelationName(rel));
    const char *key = quote_identifier(column_name(rel, entry->args.key_attnum));
    const char *role = quote_identifier(GetUserNameFromId(GetUserId(), false));
    const bool row_security = check_enable_rls(RelationGetRelid(rel), InvalidOid, true) == RLS_ENABLED;
    ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
                    errmsg("simhash_dedup: role %s may not read column %s, which action 'mark' copies into its rows",
                           role, key),
                    row_security ? errdetail("Row security applies to role %s on table %s.", role, table)
                                 : errdetail("Role %s has no SELECT privilege on column %s of table %s.", role, key, table),
                    row_security ? errhint("Load as the table owner or a role row security does not apply to, or use "
                                           "action 'skip' or 'error'.")
                                 : errhint("GRANT SELECT (%s) ON %s TO %s; or use action 'skip' or 'error'.", key, table,
                                           role)));
}

char *tid_text(Datum tid) { return DatumGetCString(DirectFunctionCall1(tidout, tid)); }

// Column attnum of the new row: as stored in it, or for a stored generated column (generation
// expression `expression`) computed from the row, since PostgreSQL computes those only after
// BEFORE triggers (an inserted row holds NULL there, an updated one the old row's value). A
// pass-by-reference result is copied into the caller's memory context.
Datum new_row_value(const GeneratedColumns *generated, ExprState *expression, Relation rel, HeapTuple tuple,
                    int attnum, bool *isnull) {
    if (expression == nullptr) return heap_getattr(tuple, attnum, RelationGetDescr(rel), isnull);
    ExprContext *econtext = generated->econtext;
    ExecStoreHeapTuple(tuple, generated->slot, false);
    econtext->ecxt_scantuple = generated->slot;
    ResetExprContext(econtext);
    Datum value = ExecEvalExprSwitchContext(expression, econtext, isnull);
    const Form_pg_attribute att = TupleDescAttr(RelationGetDescr(rel), attnum - 1);
    if (!*isnull) value = datumCopy(value, att->attbyval, att->attlen);
    ExecClearTuple(generated->slot);
    ResetExprContext(econtext);
    return value;
}

// A row without a fingerprint, or without the text that verifies its near-duplicates, would go in
// unchecked: refused unless the trigger's nulls=keep option keeps such rows.
[[noreturn]] void refuse_null(Relation rel, const Trigger *trigger, int attnum, bool fingerprint) {
    const char *column = column_name(rel, attnum);
    ereport(ERROR,
            (errcode(ERRCODE_NOT_NULL_VIOLATION),
             errmsg("null value in column \"%s\" of relation \"%s\" violates simhash_dedup trigger \"%s\"", column,
                    RelationGetRelationName(rel), trigger->tgname),
             fingerprint ? errdetail("A row without a fingerprint cannot be checked for near-duplicates.")
                         : errdetail("A row without text in column \"%s\" cannot be verified as a near-duplicate.", column),
             errhint("Compute the column for every row and declare it NOT NULL, or add the argument 'nulls=keep' to "
                     "the trigger to keep such rows unchecked."),
             errtablecol(rel, attnum)));
    pg_unreachable();
}

const char *const kVerifyLimitHint =
    "Verify texts this large outside the trigger (by minhash() signatures and minhash_jaccard), or load them "
    "through a trigger without verify=.";

// The distinct shingles of a text, ascending, into out (room for capacity). C++ only: it owns no
// object while PostgreSQL may raise, and its exceptions reach the guard.
size_t sorted_shingles(Utf8Bytes bytes, const simhash::ShingleOptions &options, uint64_t *out, size_t capacity) {
    simhash::StopPoll poll = simhash_pg::interrupt_poll();
    return with_shingle_limit(kVerifyLimitHint, [&] {
        return simhash::sorted_distinct_shingles(bytes.data, bytes.len, options, &poll, out, capacity);
    });
}

// The sorted distinct shingle hashes of a text value, palloc'd, and how many (*count).
uint64_t *text_shingles(Datum value, const simhash::ShingleOptions &options, size_t *count) {
    text *t = DatumGetTextPP(value);
    const Utf8Bytes bytes = utf8_text(t);
    const size_t capacity = simhash::distinct_shingles_bound(bytes.len);
    uint64_t *hashes = static_cast<uint64_t *>(palloc(capacity * sizeof(uint64_t)));
    *count = sorted_shingles(bytes, options, hashes, capacity);
    if (bytes.data != VARDATA_ANY(t)) pfree(const_cast<char *>(bytes.data));
    if (t != reinterpret_cast<text *>(DatumGetPointer(value))) pfree(t);
    return hashes;
}

// Verification of candidates: the new row's text against each candidate's, by the exact
// similarity of their shingle sets. The new row's shingles are computed at the first candidate,
// so a row without candidates costs nothing.
struct Verifier {
    const DedupArguments *args;
    Datum text;          // the new row's text (never NULL)
    uint64_t *shingles;  // its distinct shingle hashes, ascending, once computed
    size_t shingle_count;
    double similarity;  // the last candidate's
};

// Whether a candidate whose text is `candidate` is a verified near-duplicate of the new row. A
// candidate without text is not.
bool verifies(Verifier *verifier, Datum candidate, bool candidate_null) {
    if (candidate_null) return false;
    const DedupArguments *args = verifier->args;
    if (verifier->shingles == nullptr) verifier->shingles = text_shingles(verifier->text, args->shingles, &verifier->shingle_count);
    size_t count;
    uint64_t *theirs = text_shingles(candidate, args->shingles, &count);
    const simhash::SetOverlap overlap = simhash::set_overlap(verifier->shingles, verifier->shingle_count, theirs, count);
    pfree(theirs);
    verifier->similarity = args->measure == kJaccard ? overlap.jaccard() : overlap.smaller_containment();
    return verifier->similarity >= args->threshold;
}

// The sentence an error detail adds about a verified near-duplicate: its similarity when the
// loader may read the texts (show_stored), else the threshold it passed.
const char *verification_note(Relation rel, const DedupArguments *args, double similarity, bool show_stored) {
    if (args->verify_attnum == 0) return "";
    const char *measure = args->measure == kJaccard ? "Jaccard" : "containment";
    const char *unit = args->shingles.unit == simhash::ShingleUnit::kWord ? "word" : "char";
    const char *column = column_name(rel, args->verify_attnum);
    if (show_stored)
        return psprintf(" Their texts in column \"%s\" have %s similarity %.3f over %s %d-shingles (at least %g "
                        "needed).",
                        column, measure, similarity, unit, args->shingles.size, args->threshold);
    return psprintf(" Their texts in column \"%s\" have %s similarity at least %g over %s %d-shingles.", column,
                    measure, args->threshold, unit, args->shingles.size);
}

}  // namespace

// Whether an updated row fails its partition's constraint: the UPDATE moves it into another
// partition (PostgreSQL deletes it here and inserts it there, firing that partition's BEFORE INSERT
// triggers). Evaluated as the executor checks a partition constraint.
static bool row_leaves_partition(Relation rel, HeapTuple tuple) {
    List *qual = RelationGetPartitionQual(rel);
    if (qual == NIL) return false;
    EState *estate = CreateExecutorState();
    MemoryContext old = MemoryContextSwitchTo(estate->es_query_cxt);
    ExprState *check = ExecPrepareCheck(qual, estate);
    TupleTableSlot *slot = MakeSingleTupleTableSlot(RelationGetDescr(rel), &TTSOpsHeapTuple);
    ExecStoreHeapTuple(tuple, slot, false);
    ExprContext *econtext = GetPerTupleExprContext(estate);
    econtext->ecxt_scantuple = slot;
    const bool fits = ExecCheck(check, econtext);
    ExecDropSingleTupleTableSlot(slot);
    MemoryContextSwitchTo(old);
    FreeExecutorState(estate);
    return !fits;
}

// The row with its mark column set to NULL: action 'mark' found no near-duplicate to point at.
static HeapTuple without_mark(Relation rel, HeapTuple tuple, int mark_attnum) {
    Datum value = (Datum)0;
    bool null = true;
    return heap_modify_tuple_by_cols(tuple, RelationGetDescr(rel), 1, &mark_attnum, &value, &null);
}

// Whether a row other than `self` within the radius of `fp` is visible (and with `verifier`,
// verifies), scanning entry->index as an index scan would: the check query's plan without SPI, the
// planner and the executor. Like SPI for a query that may write, the scan's snapshot is taken after
// a command counter increment, so it sees the rows this statement inserted before this one;
// `latest`: the latest snapshot instead of the transaction's (see the REPEATABLE READ case). False
// when the index cannot be used now (created in this transaction over broken HOT chains): the
// caller plans the check query instead; *answered says which.
static bool direct_check(const DedupEntry *entry, Relation rel, int64 fp, const ItemPointerData *self, bool latest,
                         Verifier *verifier, bool *answered) {
    Relation index = index_open(entry->index, AccessShareLock);
    if (index->rd_index->indcheckxmin &&
        !TransactionIdPrecedes(HeapTupleHeaderGetXmin(index->rd_indextuple->t_data), TransactionXmin)) {
        index_close(index, AccessShareLock);
        *answered = false;
        return false;
    }
    if (latest)
        PushCopiedSnapshot(GetLatestSnapshot());
    else
        PushActiveSnapshot(GetTransactionSnapshot());
    CommandCounterIncrement();
    UpdateActiveSnapshotCommandId();
    ScanKeyData key;
    ScanKeyEntryInitialize(&key, 0, 1, HAMMING_WITHIN_STRATEGY, InvalidOid, InvalidOid, InvalidOid,
                           make_hamming_ball_datum(fp, entry->args.radius));
    IndexScanDesc scan = index_beginscan_compat(rel, index, GetActiveSnapshot(), 1, 0);
    index_rescan(scan, &key, 1, nullptr, 0);
    TupleTableSlot *slot = table_slot_create(rel, nullptr);
    bool found = false;
    while (!found && index_getnext_slot(scan, ForwardScanDirection, slot)) {
        if (ItemPointerEquals(&slot->tts_tid, const_cast<ItemPointer>(self))) continue;
        bool text_null = true;
        const Datum text = verifier != nullptr ? slot_getattr(slot, entry->args.verify_attnum, &text_null) : (Datum)0;
        found = verifier == nullptr || verifies(verifier, text, text_null);
    }
    index_endscan(scan);
    ExecDropSingleTupleTableSlot(slot);
    PopActiveSnapshot();
    index_close(index, AccessShareLock);
    *answered = true;
    return found;
}

// The first row of the check query's result (SPI_tuptable) that is a near-duplicate: with a
// verifier the first whose text verifies; -1 if none.
static int64 first_match(const DedupEntry *entry, Verifier *verifier) {
    for (uint64 i = 0; i < SPI_processed; ++i) {
        if (verifier == nullptr) return 0;
        bool text_null;
        const Datum text = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, entry->text_field, &text_null);
        if (verifies(verifier, text, text_null)) return static_cast<int64>(i);
    }
    return -1;
}

// The row to store when it duplicates nothing: 'mark' clears the mark column.
static HeapTuple kept_row(const DedupEntry *entry, Relation rel, HeapTuple tuple) {
    return entry->args.action == kMark ? without_mark(rel, tuple, entry->args.mark_attnum) : tuple;
}

SIMHASH_FUNCTION(simhash_dedup) {
    if (!CALLED_AS_TRIGGER(fcinfo))
        ereport(ERROR, (errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
                        errmsg("simhash_dedup: not called by trigger manager")));
    TriggerData *trigdata = reinterpret_cast<TriggerData *>(fcinfo->context);
    Relation rel = trigdata->tg_relation;
    // Checks how the trigger is declared (BEFORE INSERT OR UPDATE, FOR EACH ROW) and its arguments.
    DedupEntry *entry = lookup_entry(trigdata->tg_trigger, rel, fcinfo->flinfo->fn_oid);
    const bool is_update = TRIGGER_FIRED_BY_UPDATE(trigdata->tg_event);
    HeapTuple tuple = is_update ? trigdata->tg_newtuple : trigdata->tg_trigtuple;
    TupleDesc desc = RelationGetDescr(rel);

    if (entry->creators_checked != SIMHASH_MY_LXID) {
        check_trigger_creators(rel);
        entry->creators_checked = SIMHASH_MY_LXID;
    }
    const DedupArguments *args = &entry->args;
    const DedupAction action = args->action;
    if (action == kMark && (entry->mark_checked != SIMHASH_MY_LXID || entry->mark_checked_user != GetUserId())) {
        check_mark_reader(rel, entry);
        entry->mark_checked = SIMHASH_MY_LXID;
        entry->mark_checked_user = GetUserId();
    }
    const int radius = args->radius;

    // A row moved into another partition is checked twice, against the wrong partition here and as
    // an insert there, where 'skip' would drop a row already deleted from here: refused.
    if (is_update && rel->rd_rel->relispartition && row_leaves_partition(rel, tuple))
        ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                        errmsg("simhash_dedup: the updated row no longer belongs in partition \"%s\"",
                               RelationGetRelationName(rel)),
                        errdetail("An UPDATE that moves a row into another partition is not deduplicated: the "
                                  "row would be checked against this partition, and dropped if 'skip' found a "
                                  "near-duplicate in the new one."),
                        errhint("Delete the row and insert it through the partitioned table, in one transaction.")));

    // The new row's fingerprint and text, generated columns computed.
    GeneratedColumns nested;
    const GeneratedColumns *generated = &entry->generated;
    const bool generated_busy = entry->generated_busy == SIMHASH_MY_LXID;
    if (generated_busy) {  // inserted by the generation expressions themselves: a state of its own
        prepare_generated_columns(rel, args, CurrentMemoryContext, &nested);
        generated = &nested;
    } else if (entry->generated_user != GetUserId()) {
        release_generated_columns(&entry->generated);
        prepare_generated_columns(rel, args, TopMemoryContext, &entry->generated);
        entry->generated_user = GetUserId();
    }
    if (!generated_busy) entry->generated_busy = SIMHASH_MY_LXID;
    bool fp_null;
    const Datum fp_datum = new_row_value(generated, generated->fp, rel, tuple, args->fp_attnum, &fp_null);
    bool text_null = false;
    Datum text_datum = (Datum)0;
    if (args->verify_attnum != 0)
        text_datum = new_row_value(generated, generated->text, rel, tuple, args->verify_attnum, &text_null);
    if (!generated_busy) entry->generated_busy = InvalidLocalTransactionId;

    if (is_update) {
        // Unchanged, the row is what it was when it was checked (or stored before the trigger was).
        bool old_null;
        const Datum old = heap_getattr(trigdata->tg_trigtuple, args->fp_attnum, desc, &old_null);
        bool unchanged = old_null == fp_null && (fp_null || DatumGetInt64(old) == DatumGetInt64(fp_datum));
        if (unchanged && args->verify_attnum != 0) {
            bool old_text_null;
            const Datum old_text = heap_getattr(trigdata->tg_trigtuple, args->verify_attnum, desc, &old_text_null);
            unchanged = old_text_null == text_null && (text_null || datum_image_eq(old_text, text_datum, false, -1));
        }
        if (unchanged) return PointerGetDatum(tuple);
    }
    if (fp_null || text_null) {
        if (!args->keep_nulls) refuse_null(rel, trigdata->tg_trigger, fp_null ? args->fp_attnum : args->verify_attnum, fp_null);
        return PointerGetDatum(kept_row(entry, rel, tuple));  // like UNIQUE: it duplicates nothing
    }
    const int64 fp = DatumGetInt64(fp_datum);

    lock_neighbourhood(RelationGetRelid(rel), fp, radius);

    ItemPointerData self;
    if (is_update)
        self = trigdata->tg_trigtuple->t_self;
    else
        ItemPointerSet(&self, 0, 0);  // offset 0: matches no row
    Datum values[2] = {Int64GetDatum(fp), PointerGetDatum(&self)};
    Verifier verifier = {args, text_datum, nullptr, 0, 0.0};
    Verifier *verify = args->verify_attnum != 0 ? &verifier : nullptr;

    // The check runs as the table owner (loaders need no SELECT privilege; no row security
    // applies, not even one forced on the owner), like foreign-key checks, and as a security-restricted
    // operation (as REFRESH MATERIALIZED VIEW runs the owner's query): whatever it calls cannot
    // change the session's role or settings on behalf of the owner.
    Oid save_userid;
    int save_sec;
    GetUserIdAndSecContext(&save_userid, &save_sec);
    SetUserIdAndSecContext(rel->rd_rel->relowner,
                           save_sec | SECURITY_LOCAL_USERID_CHANGE | SECURITY_RESTRICTED_OPERATION | SECURITY_NOFORCE_RLS);
    if (OidIsValid(entry->index)) {
        // Most rows have no near-duplicate: the index says so without a query. A row that has one
        // is skipped (verified here first), or goes on to the query that picks the match to report
        // or point at (verifying the candidates in the query's order). A match only the latest
        // snapshot sees is a serialization failure, which the query reports.
        Verifier *verify_here = action == kSkip ? verify : nullptr;
        bool answered;
        const bool found = direct_check(entry, rel, fp, &self, false, verify_here, &answered);
        const bool found_by_latest = answered && !found && IsolationUsesXactSnapshot() &&
                                     direct_check(entry, rel, fp, &self, true, verify_here, &answered);
        if (answered && !found_by_latest && (!found || action == kSkip)) {
            SetUserIdAndSecContext(save_userid, save_sec);
            if (found) return PointerGetDatum(nullptr);
            return PointerGetDatum(kept_row(entry, rel, tuple));
        }
    }
    // With verification every row within the radius is read, in the query's order, until one verifies.
    const long rows = verify != nullptr ? 0 : 1;
    if (SPI_connect() != SPI_OK_CONNECT) elog(ERROR, "simhash_dedup: SPI_connect failed");
    int rc = SPI_execute_plan(entry->plan, values, nullptr, false, rows);
    if (rc != SPI_OK_SELECT) elog(ERROR, "simhash_dedup: check query failed: %s", SPI_result_code_string(rc));
    int64 match = first_match(entry, verify);
    bool serialization_failure = false;
    if (match < 0 && IsolationUsesXactSnapshot()) {
        // The transaction snapshot may predate a concurrent loader's commit we waited for.
        rc = SPI_execute_snapshot(entry->plan, values, nullptr, GetLatestSnapshot(), InvalidSnapshot, false, false, rows);
        if (rc != SPI_OK_SELECT)
            elog(ERROR, "simhash_dedup: check query failed: %s", SPI_result_code_string(rc));
        match = first_match(entry, verify);
        serialization_failure = match >= 0;
    }
    SetUserIdAndSecContext(save_userid, save_sec);

    if (match < 0) {
        SPI_finish();
        return PointerGetDatum(kept_row(entry, rel, tuple));
    }

    HeapTuple found = SPI_tuptable->vals[match];
    TupleDesc found_desc = SPI_tuptable->tupdesc;
    bool isnull;
    const char *found_tid = tid_text(SPI_getbinval(found, found_desc, 1, &isnull));
    const int64 found_fp = DatumGetInt64(SPI_getbinval(found, found_desc, 2, &isnull));
    const int distance = simhash::hamming_distance(static_cast<uint64_t>(fp), static_cast<uint64_t>(found_fp));

    // The stored row's values (fingerprint, key, ctid, distance, the texts' similarity) appear in
    // messages only to a user who may read them; the loader's own fingerprint always does. Asked
    // only when raising.
    const int shown[3] = {args->fp_attnum, args->key_attnum, args->verify_attnum};
    if (serialization_failure) {
        const bool show_stored = may_see_columns(rel, shown, 3);
        ereport(ERROR, (errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
                        errmsg("could not serialize access due to a concurrent insert of a near-duplicate"),
                        show_stored ? errdetail("Fingerprint %lld is within %d bits of fingerprint %lld (row %s), committed "
                                                "after this transaction's snapshot was taken.",
                                                static_cast<long long>(fp), distance, static_cast<long long>(found_fp),
                                                found_tid)
                                    : errdetail("Fingerprint %lld is within %d bits of a row committed after this "
                                                "transaction's snapshot was taken.",
                                                static_cast<long long>(fp), radius),
                        errhint("Retry the transaction, or load in READ COMMITTED.")));
    }

    switch (action) {
        case kSkip:
            SPI_finish();
            return PointerGetDatum(nullptr);
        case kError: {
            const bool show_stored = may_see_columns(rel, shown, 3);
            char *key = nullptr;
            if (args->key_attnum != 0 && show_stored) key = SPI_getvalue(found, found_desc, 3);
            const char *verified = verification_note(rel, args, verifier.similarity, show_stored);
            ereport(ERROR, (errcode(ERRCODE_UNIQUE_VIOLATION),
                            errmsg("near-duplicate fingerprint violates simhash_dedup trigger \"%s\" on \"%s\"",
                                   trigdata->tg_trigger->tgname, RelationGetRelationName(rel)),
                            !show_stored
                                ? errdetail("Fingerprint %lld is within %d bits of the fingerprint of an existing row.%s",
                                            static_cast<long long>(fp), radius, verified)
                            : key != nullptr
                                ? errdetail("Fingerprint %lld is within %d bits of the fingerprint %lld of the "
                                            "existing row with key %s (distance %d, ctid %s).%s",
                                            static_cast<long long>(fp), radius, static_cast<long long>(found_fp),
                                            key, distance, found_tid, verified)
                                : errdetail("Fingerprint %lld is within %d bits of the fingerprint %lld of the "
                                            "existing row at ctid %s (distance %d).%s",
                                            static_cast<long long>(fp), radius, static_cast<long long>(found_fp),
                                            found_tid, distance, verified),
                            errtableconstraint(rel, trigdata->tg_trigger->tgname)));
            break;
        }
        case kMark: {
            Datum value = SPI_getbinval(found, found_desc, 3, &isnull);
            const char null = isnull ? 'n' : ' ';
            int attnum = args->mark_attnum;
            tuple = SPI_modifytuple(rel, tuple, 1, &attnum, &value, &null);  // upper executor context
            SPI_finish();
            return PointerGetDatum(tuple);
        }
    }
    pg_unreachable();
}

// The triggers the current command created: the pg_trigger oids among the objects
// pg_event_trigger_ddl_commands() reports, palloc'd, and how many (*count).
static Oid *created_triggers(int *count) {
    if (SPI_connect() != SPI_OK_CONNECT) elog(ERROR, "simhash_dedup_check_arguments: SPI_connect failed");
    const int rc = SPI_execute("SELECT classid, objid FROM pg_catalog.pg_event_trigger_ddl_commands()", true, 0);
    if (rc != SPI_OK_SELECT)
        elog(ERROR, "simhash_dedup_check_arguments: reading the command's objects failed: %s", SPI_result_code_string(rc));
    Oid *triggers = static_cast<Oid *>(SPI_palloc(sizeof(Oid) * (SPI_processed + 1)));
    *count = 0;
    for (uint64 i = 0; i < SPI_processed; ++i) {
        bool classid_null, objid_null;
        const Datum classid = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &classid_null);
        const Datum objid = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2, &objid_null);
        if (!classid_null && !objid_null && DatumGetObjectId(classid) == TriggerRelationId)
            triggers[(*count)++] = DatumGetObjectId(objid);
    }
    SPI_finish();
    return triggers;
}

// Checks trigger tgoid as its first firing would, if it calls `dedup` (this extension's
// simhash_dedup()).
static void check_created_trigger(Oid tgoid, Oid dedup) {
    Relation catalog = table_open(TriggerRelationId, AccessShareLock);
    SysScanDesc scan = trigger_scan(catalog, tgoid);
    HeapTuple row = systable_getnext(scan);
    Oid relid = InvalidOid;
    int16 tgtype = 0;
    int nargs = 0;
    char **args = nullptr;
    if (HeapTupleIsValid(row) && reinterpret_cast<Form_pg_trigger>(GETSTRUCT(row))->tgfoid == dedup) {
        const Form_pg_trigger form = reinterpret_cast<Form_pg_trigger>(GETSTRUCT(row));
        relid = form->tgrelid;
        tgtype = form->tgtype;
        nargs = form->tgnargs;
        // Laid out as RelationBuildTriggers reads it: the arguments one after another, each ended by a zero byte.
        bool isnull;
        const bytea *bytes = DatumGetByteaPP(heap_getattr(row, Anum_pg_trigger_tgargs, RelationGetDescr(catalog), &isnull));
        const char *next = isnull ? "" : VARDATA_ANY(bytes);
        args = static_cast<char **>(palloc(sizeof(char *) * (nargs + 1)));
        for (int i = 0; i < nargs; ++i) {
            args[i] = pstrdup(next);
            next += std::strlen(next) + 1;
        }
    }
    systable_endscan(scan);
    table_close(catalog, AccessShareLock);
    if (!OidIsValid(relid)) return;
    Relation rel = relation_open(relid, AccessShareLock);
    DedupArguments checked;
    check_dedup_trigger(rel, tgtype, nargs, args, &checked);
    relation_close(rel, AccessShareLock);
}

// simhash_dedup_check_arguments(): the event trigger function run at the end of every CREATE
// TRIGGER (the extension's event trigger of the same name). It checks the new triggers that call
// simhash_dedup() as their first firing would, so that a bad argument is refused when the trigger
// is created rather than when the first row is loaded. A trigger cloned onto partitions is reported
// once, for the partitioned table, whose columns every partition has by name.
SIMHASH_FUNCTION(simhash_dedup_check_arguments) {
    if (!CALLED_AS_EVENT_TRIGGER(fcinfo))
        ereport(ERROR, (errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
                        errmsg("simhash_dedup_check_arguments: not fired by event trigger manager")));
    // This extension's trigger function, in this function's schema (the extension is not relocatable).
    const char *schema = get_namespace_name(get_func_namespace(fcinfo->flinfo->fn_oid));
    const Oid dedup = LookupFuncName(list_make2(makeString(pstrdup(schema)), makeString(pstrdup("simhash_dedup"))), 0,
                                     nullptr, true);
    if (!OidIsValid(dedup)) PG_RETURN_VOID();
    int count;
    const Oid *triggers = created_triggers(&count);
    for (int i = 0; i < count; ++i) check_created_trigger(triggers[i], dedup);
    PG_RETURN_VOID();
}

// The boolean a query of Citus's catalogs returns for `relid` ($1, a regclass); false where Citus
// is not installed (its catalogs do not exist) or the query returns no row. The query names every
// object with its schema.
bool simhash_citus_catalog_says(const char *query, Oid relid, const char *function_name) {
    if (!OidIsValid(get_extension_oid("citus", true))) return false;
    if (SPI_connect() != SPI_OK_CONNECT) elog(ERROR, "%s: SPI_connect failed", function_name);
    Oid types[1] = {REGCLASSOID};
    Datum values[1] = {ObjectIdGetDatum(relid)};
    const int rc = SPI_execute_with_args(query, 1, types, values, nullptr, true, 1);
    bool says = false;
    if (rc == SPI_OK_SELECT && SPI_processed == 1) {
        bool isnull;
        const Datum value = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
        says = !isnull && DatumGetBool(value);
    }
    SPI_finish();
    return says;
}

// Whether this is a Citus worker and `scope` a distributed table there.
bool distributed_table_on_citus_worker(Oid scope, const char *function_name) {
    return simhash_citus_catalog_says(
        "SELECT l.groupid OPERATOR(pg_catalog.<>) 0 AND EXISTS (SELECT FROM pg_catalog.pg_dist_partition p "
        "WHERE p.logicalrelid OPERATOR(pg_catalog.=) $1) FROM pg_catalog.pg_dist_local_group l",
        scope, function_name);
}

// On a Citus worker the locks of a distributed table would be the worker's own: loaders connected to
// other nodes would not see them, and near-duplicates loaded at once through two nodes would both go
// in. Refused there; the coordinator's locks are held until every worker has committed (Citus
// commits the workers in its commit callback, before locks are released), so loaders go through
// it. Decided once per transaction and scope.
void refuse_locks_on_citus_worker(Oid scope, const char *function_name) {
    static LocalTransactionId checked_lxid = InvalidLocalTransactionId;
    static Oid checked_scope = InvalidOid;
    if (checked_lxid == SIMHASH_MY_LXID && checked_scope == scope) return;
    if (distributed_table_on_citus_worker(scope, function_name))
        ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                        errmsg("%s: the neighbourhood locks of distributed table %s are taken on the Citus coordinator",
                               function_name, get_rel_name(scope)),
                        errdetail("Locks taken on a worker are not seen by loaders connected to other nodes, so "
                                  "near-duplicates loaded at once through two nodes could both go in."),
                        errhint("Run the load (lock, check, insert) in a session connected to the coordinator.")));
    checked_lxid = SIMHASH_MY_LXID;
    checked_scope = scope;
}

// Taking a table's keys stalls every dedup load into it, so it needs the right to write into it
// (INSERT or UPDATE), as the trigger's own loads do. The scope is the table loaded into: the locks
// of an index or a view would be shared with no trigger's.
void check_lock_scope(Oid scope, const char *function_name) {
    char *scope_name = get_rel_name(scope);
    if (scope_name == nullptr)
        ereport(ERROR, (errcode(ERRCODE_UNDEFINED_TABLE), errmsg("relation with OID %u does not exist", scope)));
    const char relkind = get_rel_relkind(scope);
    if (relkind != RELKIND_RELATION && relkind != RELKIND_PARTITIONED_TABLE)
        ereport(ERROR, (errcode(ERRCODE_WRONG_OBJECT_TYPE),
                        errmsg("%s: scope \"%s\" is not a table", function_name, scope_name),
                        errhint("Pass the table the rows are loaded into, the one whose simhash_dedup trigger takes "
                                "the same locks.")));
    if (pg_class_aclcheck(scope, GetUserId(), ACL_INSERT | ACL_UPDATE) != ACLCHECK_OK)
        ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
                        errmsg("permission denied to lock the neighbourhoods of table %s", scope_name),
                        errdetail("%s needs INSERT or UPDATE privilege on the scope table.", function_name)));
    refuse_locks_on_citus_worker(scope, function_name);
}

// simhash_lock_neighbourhood(fingerprint, radius, scope): the trigger's locks, for load procedures
// of one's own (hold them, then check, then insert; they last until the transaction ends).
SIMHASH_FUNCTION(simhash_lock_neighbourhood) {
    const int radius = radius_argument(fcinfo, 1);
    const Oid scope = PG_GETARG_OID(2);
    check_lock_scope(scope, "simhash_lock_neighbourhood");
    lock_neighbourhood(scope, PG_GETARG_INT64(0), radius);
    PG_RETURN_VOID();
}

// simhash_lock_neighbourhoods(fingerprints, radius, scope): the locks of a whole batch at once, in
// one ascending order. A transaction that loads several rows and takes its locks row by row can
// deadlock with another doing the same (their keys interleave); one that takes them all first
// waits at most, and only for transactions that hold some of them.
SIMHASH_FUNCTION(simhash_lock_neighbourhoods) {
    const int radius = radius_argument(fcinfo, 1);
    const Oid scope = PG_GETARG_OID(2);
    check_lock_scope(scope, "simhash_lock_neighbourhoods");
    ArrayType *array = PG_GETARG_ARRAYTYPE_P(0);
    one_dimensional(array, "simhash_lock_neighbourhoods", "fingerprints");
    Datum *values;
    bool *nulls;
    int count;
    deconstruct_array(array, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, &values, &nulls, &count);
    bool *wanted = static_cast<bool *>(palloc0(sizeof(bool) * kLockKeys));
    uint32 keys[65];
    for (int i = 0; i < count; ++i) {
        if (nulls[i]) continue;  // a row without a fingerprint is never a duplicate
        const int n = neighbourhood_keys(DatumGetInt64(values[i]), radius, keys);
        for (int k = 0; k < n; ++k) wanted[keys[k]] = true;
        if ((i & 0x3FF) == 0x3FF) CHECK_FOR_INTERRUPTS();
    }
    for (uint32 key = 0; key < kLockKeys; ++key)
        if (wanted[key]) lock_key(scope, key);
    pfree(wanted);
    PG_RETURN_VOID();
}

// Every key of a table, for a load that checks a whole batch of rows (a batch of a few thousand
// rows needs nearly all of them anyway). They are taken in ascending order, and never while
// waiting: when another transaction holds a key, the keys taken so far by this call are given
// back, the call waits for that key alone, gives it back and starts again. So a bulk load never
// holds keys while it waits, and cannot deadlock with trigger loads or other bulk loads, whose
// keys it may have taken in any order (keys this transaction held before the call stay held).
void simhash_lock_every_neighbourhood(Oid relid) {
    uint32 *taken = static_cast<uint32 *>(palloc(sizeof(uint32) * kLockKeys));
    for (;;) {
        int ntaken = 0;
        uint32 blocked = kLockKeys;
        for (uint32 key = 0; key < kLockKeys; ++key) {
            if (key_recorded(relid, key)) continue;
            if (!acquire_key(relid, key, true)) {
                blocked = key;
                break;
            }
            taken[ntaken++] = key;
        }
        if (blocked == kLockKeys) break;
        for (int i = 0; i < ntaken; ++i) unlock_key(relid, taken[i]);
        lock_key(relid, blocked);  // waits for its holder, holding nothing else of this call
        unlock_key(relid, blocked);
        CHECK_FOR_INTERRUPTS();
    }
    pfree(taken);
}

// simhash_neighbourhood_keys(fingerprint, radius): the folded lock keys, for inspection.
SIMHASH_FUNCTION(simhash_neighbourhood_keys) {
    const int radius = radius_argument(fcinfo, 1);
    uint32 keys[65];
    const int n = neighbourhood_keys(PG_GETARG_INT64(0), radius, keys);
    Datum *elems = static_cast<Datum *>(palloc(sizeof(Datum) * n));
    for (int i = 0; i < n; ++i) elems[i] = Int32GetDatum(static_cast<int32>(keys[i]));
    PG_RETURN_POINTER(construct_array(elems, n, INT4OID, 4, true, TYPALIGN_INT));
}
