from miner.entry import run

run()
