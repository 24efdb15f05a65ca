// amvalidate: an operator class of simhash indexes bigint, has the search operator strategy 1,
// `<@ (bigint, hamming_ball)`, optionally the ordering operator strategy 2, `<~> (bigint, bigint)`
// sorted by integer_ops, and no support functions.
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

bool simhash_amvalidate(Oid opclassoid) {
    bool result = true;
    HeapTuple classtup = SearchSysCache1(CLAOID, ObjectIdGetDatum(opclassoid));
    if (!HeapTupleIsValid(classtup)) elog(ERROR, "cache lookup failed for operator class %u", opclassoid);
    Form_pg_opclass classform = reinterpret_cast<Form_pg_opclass>(GETSTRUCT(classtup));
    const Oid opfamilyoid = classform->opcfamily;
    const char *opclassname = NameStr(classform->opcname);
    const Oid ball_type = GetSysCacheOid2(TYPENAMENSP, Anum_pg_type_oid, CStringGetDatum("hamming_ball"),
                                          ObjectIdGetDatum(classform->opcnamespace));

    if (classform->opcintype != INT8OID) {
        ereport(INFO, (errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
                       errmsg("simhash operator class \"%s\" must index type bigint", opclassname)));
        result = false;
    }
    if (!OidIsValid(ball_type)) {
        ereport(INFO, (errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
                       errmsg("simhash operator class \"%s\" is not in the schema of type hamming_ball", opclassname)));
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
        const bool search = oprform->amopstrategy == HAMMING_WITHIN_STRATEGY && oprform->amoppurpose == AMOP_SEARCH &&
                            oprform->amoplefttype == INT8OID && oprform->amoprighttype == ball_type &&
                            check_amop_signature(oprform->amopopr, BOOLOID, INT8OID, ball_type);
        const bool order = oprform->amopstrategy == HAMMING_DISTANCE_STRATEGY && oprform->amoppurpose == AMOP_ORDER &&
                           oprform->amoplefttype == INT8OID && oprform->amoprighttype == INT8OID &&
                           oprform->amopsortfamily == INTEGER_BTREE_FAM_OID &&
                           getBaseType(get_op_rettype(oprform->amopopr)) == INT4OID;
        if (!search && !order) {
            ereport(INFO, (errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
                           errmsg("simhash operator family of \"%s\" contains invalid operator %s with strategy %d; "
                                  "only strategy 1, <@ (bigint, hamming_ball), and the ordering operator 2, "
                                  "<~> (bigint, bigint) FOR ORDER BY integer_ops, are allowed",
                                  opclassname, format_operator(oprform->amopopr), oprform->amopstrategy)));
            result = false;
        }
        has_search = has_search || search;
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
