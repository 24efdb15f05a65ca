// amcostestimate: the pending lists (read in full by every scan) plus every run's cost from
// simhash_estimate_scan, the estimate the scan itself uses to choose between probing and reading
// the run's table 0, so the planner prices the strategy that will run, and the cost never
// decreases as the radius grows (both strategies' costs are non-decreasing in it). The
// selectivity comes from the operator's restriction estimator.
#include <cmath>

#include "am/simhash_am.h"
#include "hamming_ball.h"

extern "C" {
#include "access/genam.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "utils/selfuncs.h"
#include "utils/spccache.h"
}

namespace {

constexpr int kAssumedRadius = 3;  // parameterized radius: the planner support assumes the same

// The smallest radius known at plan time among the index quals (Const ball, or hamming_ball(q, k)
// with a constant k); kAssumedRadius when none is known.
int qual_radius(IndexPath *path) {
    int radius = INT_MAX;
    ListCell *lc;
    foreach (lc, path->indexclauses) {
        IndexClause *iclause = lfirst_node(IndexClause, lc);
        ListCell *lc2;
        foreach (lc2, iclause->indexquals) {
            RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc2);
            if (!IsA(rinfo->clause, OpExpr)) continue;
            OpExpr *op = reinterpret_cast<OpExpr *>(rinfo->clause);
            if (list_length(op->args) != 2) continue;
            Node *ball = static_cast<Node *>(lsecond(op->args));
            if (IsA(ball, Const)) {
                Const *c = reinterpret_cast<Const *>(ball);
                radius = Min(radius, c->constisnull ? -1 : DatumGetHammingBall(c->constvalue)->radius);
            } else if (IsA(ball, FuncExpr) && list_length(reinterpret_cast<FuncExpr *>(ball)->args) == 2) {
                Node *k = static_cast<Node *>(lsecond(reinterpret_cast<FuncExpr *>(ball)->args));
                if (IsA(k, Const))
                    radius = Min(radius, reinterpret_cast<Const *>(k)->constisnull ? -1
                                                                                  : DatumGetInt32(reinterpret_cast<Const *>(k)->constvalue));
            }
        }
    }
    return radius == INT_MAX ? kAssumedRadius : radius;
}

}  // namespace

void simhash_amcostestimate(PlannerInfo *root, IndexPath *path, double loop_count, Cost *indexStartupCost,
                            Cost *indexTotalCost, Selectivity *indexSelectivity, double *indexCorrelation,
                            double *indexPages) {
    IndexOptInfo *index = path->indexinfo;
    GenericCosts costs;
    memset(&costs, 0, sizeof(costs));
    genericcostestimate(root, path, loop_count, &costs);  // selectivity and qual costs

    SimhashMetaData meta;
    Relation rel = index_open(index->indexoid, AccessShareLock);
    simhash_read_meta(rel, &meta);
    index_close(rel, AccessShareLock);

    const int radius = qual_radius(path);
    const double pending = static_cast<double>(meta.npending + meta.nmerge);
    // The pending lists are read in full by every scan: pages in chain order, every entry checked.
    double pages = 1.0 + meta.npending_pages + meta.nmerge_pages;  // with the metapage
    double random_page_cost, seq_page_cost;
    get_tablespace_page_costs(index->reltablespace, &random_page_cost, &seq_page_cost);
    double io = pages * seq_page_cost;
    const double tuples = pending;
    double scan_cpu = 0;  // the runs' work, from the estimate that picks each run's strategy
    if (radius >= 0) {
        for (uint32 i = 0; i < meta.nruns; ++i) {
            SimhashScanEstimate estimate;
            simhash_estimate_scan(&meta.runs[i], radius, random_page_cost, seq_page_cost, &estimate);
            pages += estimate.pages + 1;  // and the run's header
            io += estimate.io_cost + random_page_cost;
            scan_cpu += estimate.cpu_cost;
        }
    }
    pages = Min(pages, static_cast<double>(Max(index->pages, 1)));
    if (loop_count > 1) {  // repeated scans find pages cached, as for the built-in indexes
        const double fetched = index_pages_fetched(pages * loop_count, index->pages, static_cast<double>(index->pages), root);
        io = Min(io, fetched * random_page_cost / loop_count);
    }
    const double qual_op_cost = cpu_operator_cost * list_length(path->indexclauses);
    *indexStartupCost = costs.indexStartupCost;
    *indexTotalCost = costs.indexStartupCost + io + scan_cpu + tuples * (cpu_index_tuple_cost + qual_op_cost);
    *indexSelectivity = costs.indexSelectivity;
    *indexCorrelation = 0.0;
    *indexPages = pages;
}
