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
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/partition.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_trigger.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "commands/trigger.h"
#include "executor/executor.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "parser/parse_coerce.h"
#include "storage/lock.h"
#include "storage/proc.h"
#include "utils/array.h"
#include "utils/builtins.h"
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

void lock_key(Oid relid, uint32 key) {
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
    const uint64 bit = uint64{1} << (key % 64);
    if (held_keys.bits[key / 64] & bit) return;
    LOCKTAG tag;
    SET_LOCKTAG_ADVISORY(tag, MyDatabaseId, relid, key, kLockSpace);
    // Owned by the (sub)transaction, not by whatever resource owner is current: a trigger or call
    // running inside a cursor's FETCH would give the lock to the cursor's portal, and a later
    // FETCH that fails releases the portal's locks while the rows they guard stay inserted (and
    // this record would still say they are held).
    ResourceOwner caller_owner = CurrentResourceOwner;
    CurrentResourceOwner = CurTransactionResourceOwner;
    (void)LockAcquire(&tag, ExclusiveLock, false, false);
    CurrentResourceOwner = caller_owner;
    held_keys.bits[key / 64] |= bit;  // only once the lock is held: a cancelled wait leaves no bit
}

void lock_neighbourhood(Oid relid, int64 fp, int radius) {
    uint32 keys[65];
    const int n = neighbourhood_keys(fp, radius, keys);
    for (int i = 0; i < n; ++i) lock_key(relid, keys[i]);
}

enum DedupAction { kSkip, kError, kMark };

// One saved check plan per trigger (pg_trigger oid). Rebuilt when the table's relcache entry is
// invalidated (rename, ALTER) and the query text changed.
struct DedupEntry {
    Oid tgoid;  // hash key
    bool stale;
    Oid relid;
    DedupAction action;
    int radius;
    int fp_attnum;
    int mark_attnum;  // 0 unless mark
    int key_attnum;   // the key column (the check query's 3rd column), 0 when there is none
    char *query;      // in TopMemoryContext
    SPIPlanPtr plan;  // saved
    Oid index;        // a simhash index the trigger scans itself (see direct_check), or InvalidOid
    // The transaction in which the table's TRIGGER grantees were last checked (check_trigger_creators),
    // and the transaction and user for whom 'mark' was last allowed (check_mark_reader).
    LocalTransactionId creators_checked;
    LocalTransactionId mark_checked;
    Oid mark_checked_user;
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

int parse_radius(const char *text) {
    char *end = nullptr;
    errno = 0;
    const long value = std::strtol(text, &end, 10);
    // Digits only: strtol would also take leading spaces and a sign.
    if (!(text[0] >= '0' && text[0] <= '9') || *end != '\0' || errno != 0 || value < 0 || value > 64)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("simhash_dedup: radius must be an integer between 0 and 64, not \"%s\"", text)));
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

void prepare_entry(DedupEntry *entry, Trigger *trigger, Relation rel, Oid trigger_function) {
    const int nargs = trigger->tgnargs;
    char **args = trigger->tgargs;
    if (nargs < 3)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("simhash_dedup: expected arguments (fingerprint column, radius, action [, ...]), got %d",
                               nargs),
                        errhint("For example: EXECUTE FUNCTION simhash_dedup('fp', '3', 'skip').")));
    DedupAction action;
    int max_args;
    if (std::strcmp(args[2], "skip") == 0) {
        action = kSkip;
        max_args = 3;
    } else if (std::strcmp(args[2], "error") == 0) {
        action = kError;
        max_args = 4;  // optional key column named in the error detail
    } else if (std::strcmp(args[2], "mark") == 0) {
        action = kMark;
        max_args = 5;  // mark column, optional key column (default id)
        if (nargs < 4)
            ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                            errmsg("simhash_dedup: action 'mark' needs the column to mark as 4th argument")));
    } else {
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("simhash_dedup: action must be 'skip', 'error' or 'mark', not \"%s\"", args[2])));
    }
    if (nargs > max_args)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("simhash_dedup: too many arguments (%d) for action '%s'", nargs, args[2])));
    const int radius = parse_radius(args[1]);
    const int fp_attnum = column_attnum(rel, args[0], "fingerprint");
    TupleDesc desc = RelationGetDescr(rel);
    if (getBaseType(TupleDescAttr(desc, fp_attnum - 1)->atttypid) != INT8OID)  // bigint or a domain over it
        ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
                        errmsg("simhash_dedup: fingerprint column \"%s\" must be of type bigint", args[0])));
    if (TupleDescAttr(desc, fp_attnum - 1)->attgenerated != '\0')
        ereport(ERROR,
                (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                 errmsg("simhash_dedup: fingerprint column \"%s\" is a generated column", args[0]),
                 errdetail("Generated columns are computed after BEFORE triggers: the trigger would see NULL."),
                 errhint("Make it a plain bigint column set by the load (simhash(body)) or by a BEFORE trigger "
                         "whose name sorts before this one.")));
    int mark_attnum = 0;
    const char *key_column = nullptr;
    int key_attnum = 0;
    if (action == kMark) {
        mark_attnum = column_attnum(rel, args[3], "mark");
        key_column = nargs == 5 ? args[4] : "id";
        key_attnum = column_attnum(rel, key_column, "key");
        check_mark_column(rel, args[3], mark_attnum, fp_attnum, key_column, key_attnum);
    } else if (action == kError && nargs == 4) {
        key_column = args[3];
        key_attnum = column_attnum(rel, key_column, "key");
    }

    // Nothing in the text is resolved through the search_path: the table, this extension's
    // hamming() and its <= (whose planner support turns the comparison into an index search), and
    // pg_catalog's tid <> and casts are named with their schemas. The ORDER BY uses the default
    // B-tree operator classes of int4, bool and tid, which only a superuser can create.
    // The trigger function's own schema is the extension's (it is not relocatable).
    const char *ext = quote_identifier(get_namespace_name(get_func_namespace(trigger_function)));
    StringInfoData query;
    initStringInfo(&query);
    const char *fp = quote_identifier(args[0]);
    appendStringInfo(&query, "SELECT ctid, %s", fp);
    if (action == kMark) {
        Form_pg_attribute mark = TupleDescAttr(desc, mark_attnum - 1);
        appendStringInfo(&query, ", CAST(%s AS %s)", quote_identifier(key_column),
                         format_type_extended(mark->atttypid, mark->atttypmod,
                                              FORMAT_TYPE_TYPEMOD_GIVEN | FORMAT_TYPE_FORCE_QUALIFY));
    } else if (key_column != nullptr) {
        appendStringInfo(&query, ", CAST(%s AS pg_catalog.text)", quote_identifier(key_column));
    }
    appendStringInfo(&query,
                     " FROM ONLY %s.%s WHERE %s.hamming(%s, $1) OPERATOR(%s.<=) %d"
                     " AND ctid OPERATOR(pg_catalog.<>) $2",
                     quote_identifier(get_namespace_name(RelationGetNamespace(rel))),
                     quote_identifier(RelationGetRelationName(rel)), ext, fp, ext, radius);
    // 'skip' needs any near-duplicate (no sort to set up per row); the others name the one they
    // report or point at, so it is the nearest, ties by ctid, preferring an original (unmarked) row.
    if (action != kSkip) {
        appendStringInfoString(&query, " ORDER BY ");
        if (action == kMark) appendStringInfo(&query, "%s IS NOT NULL, ", quote_identifier(args[3]));
        appendStringInfo(&query, "%s.hamming(%s, $1), ctid", ext, fp);
    }
    appendStringInfoString(&query, " LIMIT 1");

    entry->relid = RelationGetRelid(rel);
    entry->action = action;
    entry->radius = radius;
    entry->fp_attnum = fp_attnum;
    entry->mark_attnum = mark_attnum;
    entry->key_attnum = key_attnum;
    entry->index = direct_check_index(rel, fp_attnum, radius);
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

bool trigger_exists(Oid tgoid) {
    Relation catalog = table_open(TriggerRelationId, AccessShareLock);
    ScanKeyData key;
    ScanKeyInit(&key, Anum_pg_trigger_oid, BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(tgoid));
    SysScanDesc scan = systable_beginscan(catalog, TriggerOidIndexId, true, nullptr, 1, &key);
    const bool found = HeapTupleIsValid(systable_getnext(scan));
    systable_endscan(scan);
    table_close(catalog, AccessShareLock);
    return found;
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
    }
    bool found;
    DedupEntry *entry = static_cast<DedupEntry *>(hash_search(dedup_entries, &trigger->tgoid, HASH_ENTER, &found));
    if (!found) {
        entry->stale = true;
        entry->relid = InvalidOid;
        entry->query = nullptr;
        entry->plan = nullptr;
        entry->index = InvalidOid;
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
    const int shown[1] = {entry->key_attnum};
    if (may_see_columns(rel, shown, 1)) return;
    const char *table = quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)),
                                                   RelationGetRelationName(rel));
    const char *key = quote_identifier(NameStr(TupleDescAttr(RelationGetDescr(rel), entry->key_attnum - 1)->attname));
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

// Whether a row other than `self` within entry->radius bits of `fp` is visible, scanning
// entry->index as an index scan would: the check query's plan without SPI, the planner and the
// executor. Like SPI for a query that may write, the scan's snapshot is taken after a command
// counter increment, so it sees the rows this statement inserted before this one; `latest`: the
// latest snapshot instead of the transaction's (see the REPEATABLE READ case). False when the index
// cannot be used now (created in this transaction over broken HOT chains): the caller plans the
// check query instead; *answered says which.
static bool direct_check(const DedupEntry *entry, Relation rel, int64 fp, const ItemPointerData *self, bool latest,
                         bool *answered) {
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
                           make_hamming_ball_datum(fp, entry->radius));
    IndexScanDesc scan = index_beginscan_compat(rel, index, GetActiveSnapshot(), 1, 0);
    index_rescan(scan, &key, 1, nullptr, 0);
    TupleTableSlot *slot = table_slot_create(rel, nullptr);
    bool found = false;
    while (!found && index_getnext_slot(scan, ForwardScanDirection, slot))
        found = !ItemPointerEquals(&slot->tts_tid, const_cast<ItemPointer>(self));
    index_endscan(scan);
    ExecDropSingleTupleTableSlot(slot);
    PopActiveSnapshot();
    index_close(index, AccessShareLock);
    *answered = true;
    return found;
}

SIMHASH_FUNCTION(simhash_dedup) {
    if (!CALLED_AS_TRIGGER(fcinfo))
        ereport(ERROR, (errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
                        errmsg("simhash_dedup: not called by trigger manager")));
    TriggerData *trigdata = reinterpret_cast<TriggerData *>(fcinfo->context);
    const TriggerEvent event = trigdata->tg_event;
    if (!TRIGGER_FIRED_BEFORE(event) || !TRIGGER_FIRED_FOR_ROW(event) ||
        !(TRIGGER_FIRED_BY_INSERT(event) || TRIGGER_FIRED_BY_UPDATE(event)))
        ereport(ERROR, (errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
                        errmsg("simhash_dedup: must be fired BEFORE INSERT or UPDATE, FOR EACH ROW")));
    Relation rel = trigdata->tg_relation;
    const bool is_update = TRIGGER_FIRED_BY_UPDATE(event);
    HeapTuple tuple = is_update ? trigdata->tg_newtuple : trigdata->tg_trigtuple;
    TupleDesc desc = RelationGetDescr(rel);

    DedupEntry *entry = lookup_entry(trigdata->tg_trigger, rel, fcinfo->flinfo->fn_oid);
    if (entry->creators_checked != SIMHASH_MY_LXID) {
        check_trigger_creators(rel);
        entry->creators_checked = SIMHASH_MY_LXID;
    }
    if (entry->action == kMark && (entry->mark_checked != SIMHASH_MY_LXID || entry->mark_checked_user != GetUserId())) {
        check_mark_reader(rel, entry);
        entry->mark_checked = SIMHASH_MY_LXID;
        entry->mark_checked_user = GetUserId();
    }
    const DedupAction action = entry->action;
    const int radius = entry->radius;
    const int mark_attnum = entry->mark_attnum;

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
    bool fp_null;
    const Datum fp_datum = heap_getattr(tuple, entry->fp_attnum, desc, &fp_null);
    if (is_update) {
        bool old_null;
        const Datum old = heap_getattr(trigdata->tg_trigtuple, entry->fp_attnum, desc, &old_null);
        if (old_null == fp_null && (fp_null || DatumGetInt64(old) == DatumGetInt64(fp_datum)))
            return PointerGetDatum(tuple);  // fingerprint unchanged: nothing to check
    }
    if (fp_null)  // like UNIQUE: a NULL fingerprint duplicates nothing
        return PointerGetDatum(action == kMark ? without_mark(rel, tuple, mark_attnum) : tuple);
    const int64 fp = DatumGetInt64(fp_datum);

    lock_neighbourhood(RelationGetRelid(rel), fp, radius);

    ItemPointerData self;
    if (is_update)
        self = trigdata->tg_trigtuple->t_self;
    else
        ItemPointerSet(&self, 0, 0);  // offset 0: matches no row
    Datum values[2] = {Int64GetDatum(fp), PointerGetDatum(&self)};

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
        // is skipped, or goes on to the query that picks the match to report or point at.
        // A match only the latest snapshot sees is a serialization failure, which the query reports.
        bool answered;
        const bool found = direct_check(entry, rel, fp, &self, false, &answered);
        const bool found_by_latest =
            answered && !found && IsolationUsesXactSnapshot() && direct_check(entry, rel, fp, &self, true, &answered);
        if (answered && !found_by_latest && (!found || action == kSkip)) {
            SetUserIdAndSecContext(save_userid, save_sec);
            if (found) return PointerGetDatum(nullptr);
            return PointerGetDatum(action == kMark ? without_mark(rel, tuple, mark_attnum) : tuple);
        }
    }
    if (SPI_connect() != SPI_OK_CONNECT) elog(ERROR, "simhash_dedup: SPI_connect failed");
    int rc = SPI_execute_plan(entry->plan, values, nullptr, false, 1);
    if (rc != SPI_OK_SELECT) elog(ERROR, "simhash_dedup: check query failed: %s", SPI_result_code_string(rc));
    bool serialization_failure = false;
    if (SPI_processed == 0 && IsolationUsesXactSnapshot()) {
        // The transaction snapshot may predate a concurrent loader's commit we waited for.
        rc = SPI_execute_snapshot(entry->plan, values, nullptr, GetLatestSnapshot(), InvalidSnapshot, false, false, 1);
        if (rc != SPI_OK_SELECT)
            elog(ERROR, "simhash_dedup: check query failed: %s", SPI_result_code_string(rc));
        serialization_failure = SPI_processed > 0;
    }
    SetUserIdAndSecContext(save_userid, save_sec);

    if (SPI_processed == 0) {
        SPI_finish();
        return PointerGetDatum(action == kMark ? without_mark(rel, tuple, mark_attnum) : tuple);
    }

    HeapTuple found = SPI_tuptable->vals[0];
    TupleDesc found_desc = SPI_tuptable->tupdesc;
    bool isnull;
    const char *found_tid = tid_text(SPI_getbinval(found, found_desc, 1, &isnull));
    const int64 found_fp = DatumGetInt64(SPI_getbinval(found, found_desc, 2, &isnull));
    const int distance = simhash::hamming_distance(static_cast<uint64_t>(fp), static_cast<uint64_t>(found_fp));

    // The stored row's values (fingerprint, key, ctid, distance) appear in messages only to a user
    // who may read them; the loader's own fingerprint always does. Asked only when raising.
    const int shown[2] = {entry->fp_attnum, entry->key_attnum};
    if (serialization_failure) {
        const bool show_stored = may_see_columns(rel, shown, 2);
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
            const bool show_stored = may_see_columns(rel, shown, 2);
            char *key = nullptr;
            if (entry->key_attnum != 0 && show_stored) key = SPI_getvalue(found, found_desc, 3);
            ereport(ERROR, (errcode(ERRCODE_UNIQUE_VIOLATION),
                            errmsg("near-duplicate fingerprint violates simhash_dedup trigger \"%s\" on \"%s\"",
                                   trigdata->tg_trigger->tgname, RelationGetRelationName(rel)),
                            !show_stored
                                ? errdetail("Fingerprint %lld is within %d bits of the fingerprint of an existing row.",
                                            static_cast<long long>(fp), radius)
                            : key != nullptr
                                ? errdetail("Fingerprint %lld is within %d bits of the fingerprint %lld of the "
                                            "existing row with key %s (distance %d, ctid %s).",
                                            static_cast<long long>(fp), radius, static_cast<long long>(found_fp),
                                            key, distance, found_tid)
                                : errdetail("Fingerprint %lld is within %d bits of the fingerprint %lld of the "
                                            "existing row at ctid %s (distance %d).",
                                            static_cast<long long>(fp), radius, static_cast<long long>(found_fp),
                                            found_tid, distance),
                            errtableconstraint(rel, trigdata->tg_trigger->tgname)));
            break;
        }
        case kMark: {
            Datum value = SPI_getbinval(found, found_desc, 3, &isnull);
            const char null = isnull ? 'n' : ' ';
            int attnum = mark_attnum;
            tuple = SPI_modifytuple(rel, tuple, 1, &attnum, &value, &null);  // upper executor context
            SPI_finish();
            return PointerGetDatum(tuple);
        }
    }
    pg_unreachable();
}

// Whether this is a Citus worker and `scope` a distributed table there (Citus's catalogs read with
// every name qualified; false where Citus is not installed).
bool distributed_table_on_citus_worker(Oid scope, const char *function_name) {
    if (!OidIsValid(get_extension_oid("citus", true))) return false;
    if (SPI_connect() != SPI_OK_CONNECT) elog(ERROR, "%s: SPI_connect failed", function_name);
    Oid types[1] = {REGCLASSOID};
    Datum values[1] = {ObjectIdGetDatum(scope)};
    const int rc = SPI_execute_with_args(
        "SELECT l.groupid OPERATOR(pg_catalog.<>) 0 AND EXISTS (SELECT FROM pg_catalog.pg_dist_partition p "
        "WHERE p.logicalrelid OPERATOR(pg_catalog.=) $1) FROM pg_catalog.pg_dist_local_group l",
        1, types, values, nullptr, true, 1);
    bool on_worker = false;
    if (rc == SPI_OK_SELECT && SPI_processed == 1) {
        bool isnull;
        const Datum value = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
        on_worker = !isnull && DatumGetBool(value);
    }
    SPI_finish();
    return on_worker;
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

// simhash_neighbourhood_keys(fingerprint, radius): the folded lock keys, for inspection.
SIMHASH_FUNCTION(simhash_neighbourhood_keys) {
    const int radius = radius_argument(fcinfo, 1);
    uint32 keys[65];
    const int n = neighbourhood_keys(PG_GETARG_INT64(0), radius, keys);
    Datum *elems = static_cast<Datum *>(palloc(sizeof(Datum) * n));
    for (int i = 0; i < n; ++i) elems[i] = Int32GetDatum(static_cast<int32>(keys[i]));
    PG_RETURN_POINTER(construct_array(elems, n, INT4OID, 4, true, TYPALIGN_INT));
}
