import os
import sys

# refattn.py (the independent NumPy definitions) sits beside the tests
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
