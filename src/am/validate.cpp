// amvalidate: an operator class of simhash indexes bigint, has the search operator strategy 1,
// `<@ (bigint, hamming_ball)`, optionally the ordering operator strategy 2, `<~> (bigint, bigint)`
// sorted by integer_ops, and no support functions. amadjustmembers refuses any other member when
// a class or family is created or extended (a scan reads strategy 1's argument as a ball), and
// amproperty answers what the generic code cannot know.
#include "am/simhash_am.h"
#include "hamming_ball.h"

extern "C" {
#include "access/amvalidate.h"
#include "access/htup_details.h"
#include "catalog/pg_amop.h"
#include "catalog/pg_amproc.h"
#include "catalog/pg_opclass.h"
#include "catalog/pg_opfamily.h"
#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/regproc.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"
}

namespace {

// The one search operator, `<@ (bigint, hamming_ball)` returning boolean (sortfamily invalid), or
// the one ordering operator, `<~> (bigint, bigint)` returning integer, sorted by integer_ops.
bool valid_member(Oid opr, int strategy, Oid lefttype, Oid righttype, Oid sortfamily) {
    if (strategy == HAMMING_WITHIN_STRATEGY)
        return !OidIsValid(sortfamily) && lefttype == INT8OID && hamming_ball_type(righttype) &&
               check_amop_signature(opr, BOOLOID, INT8OID, righttype);
    if (strategy == HAMMING_DISTANCE_STRATEGY)
        return sortfamily == INTEGER_BTREE_FAM_OID && lefttype == INT8OID && righttype == INT8OID &&
               getBaseType(get_op_rettype(opr)) == INT4OID;
    return false;
}

}  // namespace

void simhash_amadjustmembers(Oid, Oid, List *operators, List *functions) {
    ListCell *lc;
    foreach (lc, operators) {
        const OpFamilyMember *member = static_cast<const OpFamilyMember *>(lfirst(lc));
        if (!valid_member(member->object, member->number, member->lefttype, member->righttype, member->sortfamily))
            ereport(ERROR, (errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
                            errmsg("simhash operator classes cannot have operator %s as number %d",
                                   format_operator(member->object), member->number),
                            errdetail("A simhash operator class has operator 1, <@ (bigint, hamming_ball), and "
                                      "may have operator 2, <~> (bigint, bigint) FOR ORDER BY integer_ops.")));
    }
    if (functions != NIL) {
        const OpFamilyMember *member = static_cast<const OpFamilyMember *>(linitial(functions));
        ereport(ERROR, (errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
                        errmsg("simhash operator classes cannot have support function %s",
                               format_procedure(member->object)),
                        errdetail("simhash uses no support functions.")));
    }
}

// distance_orderable: whether the column's operator family has the ordering operator (the generic
// code leaves it unknown). can_exclude: never; an exclusion constraint needs an operator between
// two values of the column, and the search operator compares a fingerprint with a ball.
bool simhash_amproperty(Oid index_oid, int attno, IndexAMProperty prop, const char *, bool *res, bool *isnull) {
    if (prop == AMPROP_CAN_EXCLUDE) {
        *res = false;
        *isnull = false;
        return true;
    }
    if (prop != AMPROP_DISTANCE_ORDERABLE || attno <= 0 || !OidIsValid(index_oid)) return false;
    const Oid opclass = get_index_column_opclass(index_oid, attno);
    if (!OidIsValid(opclass)) return false;
    const Oid opfamily = get_opclass_family(opclass);
    *res = OidIsValid(get_opfamily_member(opfamily, INT8OID, INT8OID, HAMMING_DISTANCE_STRATEGY));
    *isnull = false;
    return true;
}

bool simhash_amvalidate(Oid opclassoid) {
    bool result = true;
    HeapTuple classtup = SearchSysCache1(CLAOID, ObjectIdGetDatum(opclassoid));
    if (!HeapTupleIsValid(classtup)) elog(ERROR, "cache lookup failed for operator class %u", opclassoid);
    Form_pg_opclass classform = reinterpret_cast<Form_pg_opclass>(GETSTRUCT(classtup));
    const Oid opfamilyoid = classform->opcfamily;
    const char *opclassname = NameStr(classform->opcname);

    if (classform->opcintype != INT8OID) {
        ereport(INFO, (errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
                       errmsg("simhash operator class \"%s\" must index type bigint", opclassname)));
        result = false;
    }

    CatCList *proclist = SearchSysCacheList1(AMPROCNUM, ObjectIdGetDatum(opfamilyoid));
    for (int i = 0; i < proclist->n_members; ++i) {
        Form_pg_amproc procform = reinterpret_cast<Form_pg_amproc>(GETSTRUCT(&proclist->members[i]->tuple));
        ereport(INFO, (errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
                       errmsg("simhash operator family of \"%s\" contains support function %s with number %d; "
                              "simhash uses no support functions",
                              opclassname, format_procedure(procform->amproc), procform->amprocnum)));
        result = false;
    }
    ReleaseCatCacheList(proclist);

    bool has_search = false;
    CatCList *oprlist = SearchSysCacheList1(AMOPSTRATEGY, ObjectIdGetDatum(opfamilyoid));
    for (int i = 0; i < oprlist->n_members; ++i) {
        Form_pg_amop oprform = reinterpret_cast<Form_pg_amop>(GETSTRUCT(&oprlist->members[i]->tuple));
        // A search operator has no sort family, an ordering one has: valid_member checks which.
        const bool valid = valid_member(oprform->amopopr, oprform->amopstrategy, oprform->amoplefttype,
                                        oprform->amoprighttype, oprform->amopsortfamily);
        if (!valid) {
            ereport(INFO, (errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
                           errmsg("simhash operator family of \"%s\" contains invalid operator %s with strategy %d; "
                                  "only strategy 1, <@ (bigint, hamming_ball), and the ordering operator 2, "
                                  "<~> (bigint, bigint) FOR ORDER BY integer_ops, are allowed",
                                  opclassname, format_operator(oprform->amopopr), oprform->amopstrategy)));
            result = false;
        }
        has_search = has_search || (valid && oprform->amopstrategy == HAMMING_WITHIN_STRATEGY);
    }
    ReleaseCatCacheList(oprlist);
    if (!has_search) {
        ereport(INFO, (errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
                       errmsg("simhash operator class \"%s\" lacks operator 1, <@ (bigint, hamming_ball)", opclassname)));
        result = false;
    }
    ReleaseSysCache(classtup);
    return result;
}
