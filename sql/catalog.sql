-- Every function the extension creates has the volatility, strictness and parallel safety its
-- callers rely on, and a comment.
SELECT p.oid::regprocedure AS function, p.provolatile AS volatility, p.proparallel AS parallel,
       p.proisstrict AS strict, p.prosupport <> 0 AS has_support,
       obj_description(p.oid, 'pg_proc') IS NOT NULL AS commented
FROM pg_proc p JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'simhash'
ORDER BY p.oid::regprocedure::text;

-- Implicit array types and tables' row types (extension members from PostgreSQL 17 on) have no
-- comment of their own.
SELECT t.oid::regtype AS type, obj_description(t.oid, 'pg_type') IS NOT NULL AS commented
FROM pg_type t JOIN pg_depend d ON d.classid = 'pg_type'::regclass AND d.objid = t.oid AND d.deptype = 'e'
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'simhash'
WHERE t.typcategory <> 'A' AND NOT EXISTS (SELECT FROM pg_class c WHERE c.oid = t.typrelid AND c.relkind <> 'c')
ORDER BY t.oid::regtype::text;

SELECT o.oid::regoperator AS operator, obj_description(o.oprcode, 'pg_proc') IS NOT NULL AS function_commented
FROM pg_operator o JOIN pg_depend d ON d.classid = 'pg_operator'::regclass AND d.objid = o.oid AND d.deptype = 'e'
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'simhash'
ORDER BY o.oid::regoperator::text;
