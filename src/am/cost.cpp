// amcostestimate: pages = directory + data pages the probes touch, plus the distinct table-0 pages
// that refs passing the 32-bit filter fetch from (or one whole table when the scan falls back to
// it); tuples = expected candidates (entries sharing a probed block value), fetches and the pending
// list. The selectivity comes from the operator's restriction estimator.
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
    Buffer buffer = ReadBuffer(rel, SIMHASH_METAPAGE_BLKNO);
    LockBuffer(buffer, BUFFER_LOCK_SHARE);
    memcpy(&meta, simhash_check_meta(rel, BufferGetPage(buffer)), sizeof(meta));
    UnlockReleaseBuffer(buffer);
    index_close(rel, AccessShareLock);

    const int radius = qual_radius(path);
    const double n = static_cast<double>(meta.nentries);
    const double pending = static_cast<double>(meta.npending + meta.nmerge);
    double pages = 1.0 + meta.npending_pages + pending / SIMHASH_ENTRIES_PER_PAGE;  // metapage, pending lists
    double tuples = pending;
    double probes = 0;
    if (radius >= 0 && meta.tables[0].first != InvalidBlockNumber) {
        SimhashGeometry g;
        simhash_geometry(meta.ntables, meta.dirbits, &g);
        const int rb = Min(radius, 64) / meta.ntables;
        for (int t = 0; t < meta.ntables; ++t) probes += simhash_probe_count(g.len[t], rb);
        if (simhash_full_scan(&meta, radius, probes)) {
            pages += meta.tables[0].npages;
            tuples += n;
        } else {
            double fetches = 0;
            for (int t = 0; t < meta.ntables; ++t) {
                const double per_probe = n / ldexp(1.0, g.len[t]);  // entries sharing one block value
                const double count = simhash_probe_count(g.len[t], rb);
                const double per_page = t == 0 ? SIMHASH_ENTRIES_PER_PAGE : SIMHASH_REFS_PER_PAGE;
                pages += 1.0 + count * (1.0 + per_probe / per_page);
                tuples += count * per_probe;
                if (t > 0) {  // refs whose 32 stored bits pass fetch their entry from table 0
                    const int rest = 32 - g.len[t];
                    fetches += count * per_probe * simhash_probe_count(rest, radius) / ldexp(1.0, rest);
                }
            }
            // Fetches land on random pages of table 0: count the distinct pages they touch (plus
            // the map pages) as page reads, and each fetch as CPU.
            const double table0_pages = Max(1.0, static_cast<double>(meta.tables[0].npages));
            pages += table0_pages * (1.0 - exp(-fetches / table0_pages)) + meta.nmappages;
            tuples += fetches;
        }
    }
    pages = Min(pages, static_cast<double>(Max(index->pages, 1)));

    double random_page_cost;
    get_tablespace_page_costs(index->reltablespace, &random_page_cost, nullptr);
    double io;
    if (loop_count > 1) {
        const double fetched = index_pages_fetched(pages * loop_count, index->pages, static_cast<double>(index->pages), root);
        io = fetched * random_page_cost / loop_count;
    } else {
        io = pages * random_page_cost;
    }
    const double qual_op_cost = cpu_operator_cost * list_length(path->indexclauses);
    *indexStartupCost = costs.indexStartupCost;
    *indexTotalCost = costs.indexStartupCost + io + tuples * (cpu_index_tuple_cost + qual_op_cost) +
                      probes * cpu_operator_cost;
    *indexSelectivity = costs.indexSelectivity;
    *indexCorrelation = 0.0;
    *indexPages = pages;
}
