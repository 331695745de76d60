#!/usr/bin/python3
"""Placeholder"""
