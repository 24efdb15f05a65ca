// Planner support that lets `WHERE hamming(fp, $1) <= 3` reach the index without hooks.
//
// PostgreSQL offers a clause to an index only when one operand *is* the indexed column, so
// `int4le(hamming(fp, q), 3)` never matches. hamming() therefore returns the domain
// hamming_distance, whose comparison operators belong to this extension and carry
// hamming_comparison_support: during constant folding (SupportRequestSimplify) it rewrites
//     hamming(a, b) <= k   and  k >= hamming(a, b)   into  hamming_within(a, b, k)
//     hamming(a, b) <  k   and  k >  hamming(a, b)   into  hamming_within(a, b, k - 1)
// hamming_within's own support function answers SupportRequestIndexCondition with the operator
// class's search clause `fp <@ hamming_ball(q, k)` (lossy = false: the index checks the full
// distance) and SupportRequestSelectivity with the binomial estimate.
#include <cmath>

#include "guard.h"
#include "am/simhash_am.h"
#include "hamming_ball.h"

extern "C" {
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "nodes/supportnodes.h"
#include "optimizer/optimizer.h"
#include "parser/parse_coerce.h"
#include "parser/parse_func.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"
}

namespace {

Oid lookup_function(Oid namespace_oid, const char *name, int nargs, const Oid *argtypes) {
    List *qualified = list_make2(makeString(get_namespace_name(namespace_oid)), makeString(pstrdup(name)));
    return LookupFuncName(qualified, nargs, argtypes, true);
}

bool is_call_of(Node *node, Oid funcid) {
    return node && IsA(node, FuncExpr) && reinterpret_cast<FuncExpr *>(node)->funcid == funcid;
}

Node *strip_relabel(Node *node) {
    while (node && IsA(node, RelabelType)) node = reinterpret_cast<Node *>(reinterpret_cast<RelabelType *>(node)->arg);
    return node;
}

// The two fingerprints of a distance: hamming(a, b) (SQL, inlined by the planner before the
// comparison is simplified, so normally seen as (a <~> b)::hamming_distance, the cast a
// relabelling), or a call of <~>'s hamming_dist.
List *distance_arguments(Node *node, Oid hamming, Oid hamming_dist) {
    node = strip_relabel(node);
    if (node && IsA(node, CoerceToDomain)) node = reinterpret_cast<Node *>(reinterpret_cast<CoerceToDomain *>(node)->arg);
    if (node == nullptr) return NIL;
    if (IsA(node, OpExpr)) {
        OpExpr *op = reinterpret_cast<OpExpr *>(node);
        set_opfuncid(op);
        return op->opfuncid == hamming_dist && list_length(op->args) == 2 ? op->args : NIL;
    }
    if (is_call_of(node, hamming) || is_call_of(node, hamming_dist)) {
        List *args = reinterpret_cast<FuncExpr *>(node)->args;
        return list_length(args) == 2 ? args : NIL;
    }
    return NIL;
}

// The int4 radius r of `d <= r` equivalent to `d <= radius` (below = false) or `d < radius`
// (below = true), for a radius of any integer type, double precision or hamming_distance: a
// constant is converted here; otherwise a call converts it at run time (int2 and int4 widen, bigint
// and double precision go through hamming_radius_at_most / hamming_radius_below, which clamp it to
// -1..64 and refuse NaN). nullptr when the type is none of these, and for a NaN constant, which is
// left to the comparison to refuse when it runs.
Node *int4_radius(Node *radius, bool below, Oid namespace_oid) {
    Oid type = exprType(radius);
    const Oid base = getBaseType(type);  // hamming_distance is an int4 domain
    if (IsA(radius, Const)) {
        Const *c = reinterpret_cast<Const *>(radius);
        int32 value = 0;
        if (!c->constisnull) {
            switch (base) {
                case INT2OID: value = DatumGetInt16(c->constvalue); break;
                case INT4OID: value = DatumGetInt32(c->constvalue); break;
                case INT8OID: value = hamming_radius_from_int8(DatumGetInt64(c->constvalue), below); break;
                case FLOAT8OID:
                    if (std::isnan(DatumGetFloat8(c->constvalue))) return nullptr;
                    value = hamming_radius_from_float8(DatumGetFloat8(c->constvalue), below);
                    break;
                default: return nullptr;
            }
            if (below && (base == INT2OID || base == INT4OID)) value = hamming_radius_below_int4(value);
        }
        return reinterpret_cast<Node *>(makeConst(INT4OID, -1, InvalidOid, sizeof(int32), Int32GetDatum(value),
                                                  c->constisnull, true));
    }
    Node *int4 = nullptr;
    if (base == INT4OID) {
        int4 = type == INT4OID ? radius
                               : reinterpret_cast<Node *>(makeRelabelType(reinterpret_cast<Expr *>(radius), INT4OID,
                                                                          -1, InvalidOid, COERCE_IMPLICIT_CAST));
    } else if (base == INT2OID) {
        int4 = coerce_to_target_type(nullptr, radius, type, INT4OID, -1, COERCION_IMPLICIT, COERCE_IMPLICIT_CAST, -1);
    } else if (base == INT8OID || base == FLOAT8OID) {
        const Oid argtype[1] = {base};
        const Oid convert = lookup_function(namespace_oid, below ? "hamming_radius_below" : "hamming_radius_at_most", 1, argtype);
        if (!OidIsValid(convert)) return nullptr;
        return reinterpret_cast<Node *>(
            makeFuncExpr(convert, INT4OID, list_make1(radius), InvalidOid, InvalidOid, COERCE_EXPLICIT_CALL));
    }
    if (int4 == nullptr) return nullptr;
    if (!below) return int4;
    const Oid int4_only[1] = {INT4OID};
    const Oid minus_one = lookup_function(namespace_oid, "hamming_radius_below", 1, int4_only);
    if (!OidIsValid(minus_one)) return nullptr;
    return reinterpret_cast<Node *>(
        makeFuncExpr(minus_one, INT4OID, list_make1(int4), InvalidOid, InvalidOid, COERCE_EXPLICIT_CALL));
}

enum class Comparison { kLess, kLessEqual, kGreater, kGreaterEqual, kOther };

Comparison comparison_of(const char *function_name) {
    const char *suffix = strrchr(function_name, '_');
    if (!suffix) return Comparison::kOther;
    if (strcmp(suffix, "_lt") == 0) return Comparison::kLess;
    if (strcmp(suffix, "_le") == 0) return Comparison::kLessEqual;
    if (strcmp(suffix, "_gt") == 0) return Comparison::kGreater;
    if (strcmp(suffix, "_ge") == 0) return Comparison::kGreaterEqual;
    return Comparison::kOther;
}

Comparison commuted(Comparison c) {
    switch (c) {
        case Comparison::kLess: return Comparison::kGreater;
        case Comparison::kLessEqual: return Comparison::kGreaterEqual;
        case Comparison::kGreater: return Comparison::kLess;
        case Comparison::kGreaterEqual: return Comparison::kLessEqual;
        default: return Comparison::kOther;
    }
}

Node *simplify_comparison(SupportRequestSimplify *req) {
    FuncExpr *call = req->fcall;
    if (list_length(call->args) != 2) return nullptr;
    const Oid namespace_oid = get_func_namespace(call->funcid);
    const Oid int8_pair[2] = {INT8OID, INT8OID};
    const Oid hamming = lookup_function(namespace_oid, "hamming", 2, int8_pair);
    const Oid hamming_dist = lookup_function(namespace_oid, "hamming_dist", 2, int8_pair);
    const Oid int8_int8_int4[3] = {INT8OID, INT8OID, INT4OID};
    const Oid within = lookup_function(namespace_oid, "hamming_within", 3, int8_int8_int4);
    if (!OidIsValid(hamming) || !OidIsValid(hamming_dist) || !OidIsValid(within)) return nullptr;

    Comparison comparison = comparison_of(get_func_name(call->funcid));
    Node *left = static_cast<Node *>(linitial(call->args));
    Node *right = static_cast<Node *>(lsecond(call->args));
    List *fingerprints;
    Node *radius;
    if ((fingerprints = distance_arguments(left, hamming, hamming_dist)) != NIL) {
        radius = right;
    } else if ((fingerprints = distance_arguments(right, hamming, hamming_dist)) != NIL) {
        radius = left;
        comparison = commuted(comparison);
    } else {
        return nullptr;
    }
    if (comparison != Comparison::kLess && comparison != Comparison::kLessEqual)
        return nullptr;  // "farther than k" is not a ball: leave it to a scan
    radius = int4_radius(radius, comparison == Comparison::kLess, namespace_oid);
    if (radius == nullptr) return nullptr;
    FuncExpr *rewritten = makeFuncExpr(within, BOOLOID,
                                       list_make3(linitial(fingerprints), lsecond(fingerprints), radius),
                                       InvalidOid, InvalidOid, COERCE_EXPLICIT_CALL);
    rewritten->location = call->location;
    return reinterpret_cast<Node *>(rewritten);
}

List *index_condition(SupportRequestIndexCondition *req) {
    if (!IsA(req->node, FuncExpr)) return NIL;
    FuncExpr *call = reinterpret_cast<FuncExpr *>(req->node);
    if (list_length(call->args) != 3 || req->indexarg > 1) return NIL;
    Node *indexed = static_cast<Node *>(list_nth(call->args, req->indexarg));
    Node *query = static_cast<Node *>(list_nth(call->args, 1 - req->indexarg));
    Node *radius = static_cast<Node *>(lthird(call->args));
    if (!is_pseudo_constant_for_index(req->root, query, req->index) ||
        !is_pseudo_constant_for_index(req->root, radius, req->index))
        return NIL;

    const Oid namespace_oid = get_func_namespace(call->funcid);
    const Oid ball_type = GetSysCacheOid2(TYPENAMENSP, Anum_pg_type_oid, CStringGetDatum("hamming_ball"),
                                          ObjectIdGetDatum(namespace_oid));
    if (!OidIsValid(ball_type)) return NIL;
    const Oid search_operator = get_opfamily_member(req->opfamily, INT8OID, ball_type, HAMMING_WITHIN_STRATEGY);
    if (!OidIsValid(search_operator)) return NIL;  // not our operator class (a B-tree on fp, say)

    Expr *ball;
    if (IsA(query, Const) && IsA(radius, Const)) {
        Const *q = reinterpret_cast<Const *>(query);
        Const *k = reinterpret_cast<Const *>(radius);
        const bool isnull = q->constisnull || k->constisnull;
        ball = reinterpret_cast<Expr *>(makeConst(
            ball_type, -1, InvalidOid, sizeof(HammingBall),
            isnull ? (Datum) 0 : make_hamming_ball_datum(DatumGetInt64(q->constvalue), DatumGetInt32(k->constvalue)),
            isnull, false));
    } else {
        const Oid int8_int4[2] = {INT8OID, INT4OID};
        const Oid make_ball = lookup_function(namespace_oid, "hamming_ball", 2, int8_int4);
        if (!OidIsValid(make_ball)) return NIL;
        ball = reinterpret_cast<Expr *>(makeFuncExpr(make_ball, ball_type, list_make2(query, radius), InvalidOid,
                                                     InvalidOid, COERCE_EXPLICIT_CALL));
    }
    req->lossy = false;
    return list_make1(make_opclause(search_operator, BOOLOID, false, reinterpret_cast<Expr *>(indexed), ball,
                                    InvalidOid, InvalidOid));
}

// For a generic plan the radius is unknown; text deduplication mostly asks for small radii.
constexpr int32 kAssumedRadius = 3;

double radius_selectivity(Node *radius, int bits) {
    if (radius && IsA(radius, Const)) {
        Const *k = reinterpret_cast<Const *>(radius);
        if (k->constisnull) return 0.0;
        if (k->consttype == INT4OID) return hamming_ball_fraction(DatumGetInt32(k->constvalue), bits);
        if (k->constlen == sizeof(HammingBall))
            return hamming_ball_fraction(DatumGetHammingBall(k->constvalue)->radius, bits);
    }
    return hamming_ball_fraction(kAssumedRadius, bits);
}

// How many bits vary among the fingerprints of `column`, when a simhash index covers it: the bits
// of entropy in the blocks of its largest run, which its writer measured (64 for uniform data).
// Fingerprints with constant bits are closer to each other than uniform ones, so a ball holds a
// larger share of them; without this the planner keeps an index scan at radii where most rows
// match. 64 when the column is not a plain column with such an index.
int varying_bits(PlannerInfo *root, Node *column) {
    column = strip_relabel(column);
    if (root == nullptr || column == nullptr || !IsA(column, Var)) return 64;
    const Var *var = reinterpret_cast<const Var *>(column);
    if (var->varlevelsup != 0 || var->varno < 1 || var->varno >= root->simple_rel_array_size ||
        root->simple_rel_array == nullptr || root->simple_rel_array[var->varno] == nullptr)
        return 64;
    RelOptInfo *rel = root->simple_rel_array[var->varno];
    const Oid simhash_am = get_am_oid("simhash", true);  // access method names are not schema-qualified
    ListCell *lc;
    foreach (lc, rel->indexlist) {
        IndexOptInfo *index = lfirst_node(IndexOptInfo, lc);
        if (index->relam != simhash_am || index->ncolumns != 1 ||
            index->indexkeys[0] != var->varattno || index->indpred != NIL)
            continue;
        SimhashMetaData meta;
        Relation irel = index_open(index->indexoid, AccessShareLock);
        simhash_read_meta(irel, &meta);
        index_close(irel, AccessShareLock);
        if (meta.nruns == 0 || meta.runs[0].block_bits[0] == 0) return 64;
        const SimhashRunSlot *largest = &meta.runs[0];  // the metapage keeps its runs largest first
        int bits = 0;
        for (int t = 0; t < largest->ntables && t < SIMHASH_MAX_TABLES; ++t) bits += largest->block_bits[t];
        return Max(1, Min(bits, 64));
    }
    return 64;
}

}  // namespace

SIMHASH_FUNCTION(hamming_comparison_support) {
    Node *request = reinterpret_cast<Node *>(PG_GETARG_POINTER(0));
    if (IsA(request, SupportRequestSimplify))
        PG_RETURN_POINTER(simplify_comparison(reinterpret_cast<SupportRequestSimplify *>(request)));
    PG_RETURN_POINTER(nullptr);
}

SIMHASH_FUNCTION(hamming_within_support) {
    Node *request = reinterpret_cast<Node *>(PG_GETARG_POINTER(0));
    if (IsA(request, SupportRequestIndexCondition)) {
        List *clauses = index_condition(reinterpret_cast<SupportRequestIndexCondition *>(request));
        PG_RETURN_POINTER(clauses);
    }
    if (IsA(request, SupportRequestSelectivity)) {
        auto *req = reinterpret_cast<SupportRequestSelectivity *>(request);
        if (list_length(req->args) == 3) {
            const int bits = Min(varying_bits(req->root, static_cast<Node *>(linitial(req->args))),
                                 varying_bits(req->root, static_cast<Node *>(lsecond(req->args))));
            req->selectivity = radius_selectivity(static_cast<Node *>(lthird(req->args)), bits);
            PG_RETURN_POINTER(req);
        }
    }
    PG_RETURN_POINTER(nullptr);
}

bool hamming_ball_plan_radius(const Node *ball, int32 *radius) {
    if (IsA(ball, Const)) {
        const Const *c = reinterpret_cast<const Const *>(ball);
        *radius = c->constisnull ? -1 : DatumGetHammingBall(c->constvalue)->radius;
        return true;
    }
    if (!IsA(ball, FuncExpr) || list_length(reinterpret_cast<const FuncExpr *>(ball)->args) != 2) return false;
    const Node *k = static_cast<const Node *>(lsecond(reinterpret_cast<const FuncExpr *>(ball)->args));
    if (!IsA(k, Const) || reinterpret_cast<const Const *>(k)->consttype != INT4OID) return false;
    const Const *c = reinterpret_cast<const Const *>(k);
    *radius = c->constisnull ? -1 : DatumGetInt32(c->constvalue);
    return true;
}

// Restriction selectivity of `fp <@ ball`: the binomial fraction for a ball of known radius.
SIMHASH_FUNCTION(hamming_ball_restrict_selectivity) {
    PlannerInfo *root = reinterpret_cast<PlannerInfo *>(PG_GETARG_POINTER(0));
    List *args = reinterpret_cast<List *>(PG_GETARG_POINTER(2));
    Node *ball = list_length(args) == 2 ? static_cast<Node *>(lsecond(args)) : nullptr;
    const int bits = list_length(args) == 2 ? varying_bits(root, static_cast<Node *>(linitial(args))) : 64;
    // A ball around a center known only at run time still has its constant radius: without it an
    // index scan of a ball holding a third of the table was priced as if it returned the few rows
    // of radius 3.
    int32 radius;
    if (ball && hamming_ball_type(exprType(ball)) && hamming_ball_plan_radius(ball, &radius))
        PG_RETURN_FLOAT8(hamming_ball_fraction(radius, bits));
    PG_RETURN_FLOAT8(hamming_ball_fraction(kAssumedRadius, bits));
}

SIMHASH_FUNCTION(hamming_ball_join_selectivity) { PG_RETURN_FLOAT8(hamming_ball_fraction(kAssumedRadius)); }
