# latency.gp: the latency distribution plot of docs/PERFORMANCE.md.
# Called by bench/report.mjs as: gnuplot -e "dir='DIR'; out='PNG'" latency.gp
# DIR holds <case>.<client>.dat files: latency in us, cumulative percent.
set terminal pngcairo size 1200,520 font ",10" noenhanced
set output out
set multiplot layout 1,2 title "Latency per call, cumulative distribution (median run of each client)"
set logscale x
set xlabel "latency (us, log scale)"
set ylabel "calls answered within (%)"
set yrange [0:100]
set grid xtics ytics mxtics
set key bottom right
set title "sequential (1 in flight)"
plot dir."/stdio-seq.mcpconn.dat" using 1:2 with lines lw 2 lc rgb "#1f77b4" title "mcpconn, stdio", \
     dir."/stdio-seq.ts.dat" using 1:2 with lines lw 2 lc rgb "#ff7f0e" title "TS SDK v1, stdio", \
     dir."/stdio-seq.ts2.dat" using 1:2 with lines lw 2 lc rgb "#2ca02c" title "TS SDK v2, stdio", \
     dir."/h2-seq.mcpconn.dat" using 1:2 with lines lw 2 dt 2 lc rgb "#1f77b4" title "mcpconn, HTTP/2+TLS", \
     dir."/h2-seq.ts.dat" using 1:2 with lines lw 2 dt 2 lc rgb "#ff7f0e" title "TS SDK v1, HTTP/2+TLS", \
     dir."/h2-seq.ts2.dat" using 1:2 with lines lw 2 dt 2 lc rgb "#2ca02c" title "TS SDK v2, HTTP/2+TLS"
set title "64 in flight"
set key top left
plot dir."/stdio-64.mcpconn.dat" using 1:2 with lines lw 2 lc rgb "#1f77b4" title "mcpconn, stdio", \
     dir."/stdio-64.ts.dat" using 1:2 with lines lw 2 lc rgb "#ff7f0e" title "TS SDK v1, stdio", \
     dir."/stdio-64.ts2.dat" using 1:2 with lines lw 2 lc rgb "#2ca02c" title "TS SDK v2, stdio", \
     dir."/h2-64.mcpconn.dat" using 1:2 with lines lw 2 dt 2 lc rgb "#1f77b4" title "mcpconn, HTTP/2+TLS", \
     dir."/h2-64.ts.dat" using 1:2 with lines lw 2 dt 2 lc rgb "#ff7f0e" title "TS SDK v1, HTTP/2+TLS", \
     dir."/h2-64.ts2.dat" using 1:2 with lines lw 2 dt 2 lc rgb "#2ca02c" title "TS SDK v2, HTTP/2+TLS"
unset multiplot
