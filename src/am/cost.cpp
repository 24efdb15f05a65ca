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
constexpr double kRowHandoverSeqRows = 2.0;  // a row found costs as much as this many rows of a sequential scan

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
            const Node *ball = static_cast<Node *>(lsecond(op->args));
            int32 known;
            if (hamming_ball_type(exprType(ball)) && hamming_ball_plan_radius(ball, &known)) radius = Min(radius, known);
        }
    }
    return radius == INT_MAX ? kAssumedRadius : radius;
}

struct SearchCost {
    double pages;
    double io;
    double cpu;
};

// The index work of one search of `radius` (-1: none): the pending lists, read in full (pages in
// chain order, every entry checked), and every run's cost from the estimate that picks its
// strategy.
SearchCost search_cost(const SimhashMetaData &meta, int radius, double random_page_cost, double seq_page_cost,
                       double qual_op_cost) {
    SearchCost c;
    c.pages = 1.0 + meta.npending_pages + meta.nmerge_pages;  // with the metapage
    c.io = c.pages * seq_page_cost;
    c.cpu = static_cast<double>(meta.npending + meta.nmerge) * (cpu_index_tuple_cost + qual_op_cost);
    if (radius >= 0) {
        for (uint32 i = 0; i < meta.nruns; ++i) {
            SimhashScanEstimate estimate;
            simhash_estimate_scan(&meta.runs[i], radius, random_page_cost, seq_page_cost, &estimate);
            c.pages += estimate.pages + 1;  // and the run's header
            c.io += estimate.io_cost + random_page_cost;
            c.cpu += estimate.cpu_cost;
        }
    }
    return c;
}

}  // namespace

// An ordered scan (ORDER BY fp <~> q) searches rings of growing radius until it has returned
// what the consumer reads. Its startup cost is the rings until the expected number of rows within
// the ring (uniform fingerprints: N * |ball(r)| / 2^64) reaches the query's LIMIT (or one row),
// since each ring is searched before its first row is returned; its total cost is every ring up
// to radius 64. With a condition of known radius, one search of that radius does it all.
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
    const int ntables = simhash_ring_tables(&meta);
    index_close(rel, AccessShareLock);

    double random_page_cost, seq_page_cost;
    get_tablespace_page_costs(index->reltablespace, &random_page_cost, &seq_page_cost);
    const double qual_op_cost = cpu_operator_cost * list_length(path->indexclauses);
    const double max_pages = static_cast<double>(Max(index->pages, 1));
    // Repeated scans find pages cached, as for the built-in indexes.
    auto io_per_loop = [&](const SearchCost &c) {
        if (loop_count <= 1) return c.io;
        const double fetched = index_pages_fetched(Min(c.pages, max_pages) * loop_count, index->pages,
                                                   static_cast<double>(index->pages), root);
        return Min(c.io, fetched * random_page_cost / loop_count);
    };
    double startup = 0, total = 0, pages = 0;
    if (path->indexorderbys == NIL && path->indexclauses == NIL) {
        // No condition and no order: the index-only scan the planner offers for count(*) (any
        // index with optional keys qualifies when no column is needed). It would collect every
        // TID of the table in memory before returning one; a sequential scan does that job.
        const SearchCost c = search_cost(meta, 64, random_page_cost, seq_page_cost, qual_op_cost);
        pages = c.pages;
        startup = disable_cost;
        total = disable_cost + c.io + c.cpu;
    } else if (path->indexorderbys == NIL || path->indexclauses != NIL) {
        const SearchCost c = search_cost(meta, qual_radius(path), random_page_cost, seq_page_cost, qual_op_cost);
        pages = c.pages;
        // Every row found is handed to the executor: a TID into the bitmap (a hash lookup of its
        // heap page, in the random page order of the index) or the scan's list. Measured on 100M
        // skewed rows at radius 24 (34M matches, shared buffers), the Bitmap Index Scan spent 4.1
        // s handing them over, ~115 ns a row, twice what a sequential scan spends on a row (58 ns,
        // charged cpu_tuple_cost plus the condition's operator): so twice that is charged here.
        // Without it a ball holding a third of a skewed table looked cheaper through the index
        // than the sequential scan that beat it (100M rows, radius 24: 9.1 against 5.8 s).
        total = io_per_loop(c) + c.cpu + costs.numIndexTuples * kRowHandoverSeqRows * (cpu_tuple_cost + qual_op_cost);
        if (path->indexorderbys != NIL) startup = total;  // rows come sorted once the search is done
    } else {
        const double entries = static_cast<double>(simhash_run_entries(&meta) + meta.npending + meta.nmerge);
        const double wanted = root->limit_tuples > 0 ? root->limit_tuples : 1.0;
        // Epochs of rings (see scan.cpp): the rows wanted come once the search reaches the first
        // ring that holds them, having searched the balls of the epochs before its own; the whole
        // scan searches every epoch's ball.
        bool started = false;
        for (int done = -1; done < 64;) {
            const int ball = simhash_next_ring_radius(done, ntables);
            if (!started) {
                int ring = done + 1;
                while (ring < ball && entries * hamming_ball_fraction(ring) < wanted) ++ring;
                started = entries * hamming_ball_fraction(ring) >= wanted;
                const SearchCost c = search_cost(meta, ring, random_page_cost, seq_page_cost, qual_op_cost);
                pages = Max(pages, c.pages);
                startup = total + io_per_loop(c) + c.cpu;
            }
            const SearchCost c = search_cost(meta, ball, random_page_cost, seq_page_cost, qual_op_cost);
            total += io_per_loop(c) + c.cpu;
            done = ball;
        }
    }
    *indexStartupCost = costs.indexStartupCost + startup;
    *indexTotalCost = costs.indexStartupCost + total;
    *indexSelectivity = costs.indexSelectivity;
    *indexCorrelation = 0.0;
    *indexPages = Min(pages, max_pages);
}
